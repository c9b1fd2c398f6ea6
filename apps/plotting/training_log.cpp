// Training curves. See training_log.hpp.
#include "apps/plotting/training_log.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace attn::plot {
namespace {

// A training or validation record; other records (the run's summary, "done") are skipped.
std::optional<LogRecord> parse_record(const std::string& line, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not a JSON record ({})", where, e.what()));
  }
  ATTN_CHECK(j.is_object() && j.contains("type") && j["type"].is_string() && j.contains("update") &&
                 j["update"].is_number(),
             "{}: a log record needs \"type\" and a numeric \"update\"", where);
  if (j["type"] != "train" && j["type"] != "valid") return std::nullopt;
  LogRecord r;
  r.valid = j["type"] == "valid";
  r.update = j["update"].get<double>();
  for (const auto& [key, value] : j.items())
    if (value.is_number() && key != "update") r.values[key] = value.get<double>();
  if (auto e = r.values.find("elapsed"); e != r.values.end()) r.elapsed = e->second;
  return r;
}

// Validation records without their time (logs written before they carried "elapsed") take the
// time their update had: interpolated by update between the training records around it, or
// past the last one at the run's mean rate up to it. The time of the training record before
// would stack the validations of the updates between two records into one column.
void time_validations(std::vector<LogRecord>& records) {
  std::vector<std::pair<double, double>> timed = {{0.0, 0.0}};  // (update, elapsed), ascending
  for (const LogRecord& r : records)
    if (!r.valid && r.elapsed >= 0) timed.emplace_back(r.update, r.elapsed);
  for (LogRecord& r : records) {
    if (!r.valid || r.elapsed >= 0) continue;
    const double update = std::max(r.update, 0.0);
    const auto after =
        std::upper_bound(timed.begin(), timed.end(), update,
                         [](double u, const std::pair<double, double>& point) { return u < point.first; });
    const auto [u0, t0] = *std::prev(after);  // timed starts at update 0
    const double rate = after != timed.end() ? (after->second - t0) / (after->first - u0) : u0 > 0 ? t0 / u0 : 0.0;
    r.elapsed = t0 + rate * (update - u0);
  }
}

}  // namespace

std::vector<LogRecord> read_training_log(const std::string& path) {
  std::ifstream in(path);
  ATTN_CHECK(in.good(), "plot: cannot read the training log {}", path);
  std::vector<LogRecord> records;
  size_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::optional<LogRecord> r = parse_record(line, fmt::format("{}:{}", path, line_number));
    if (!r) continue;
    // A run resumed from an earlier checkpoint logs its updates again: what it redoes is replaced.
    if (!r->valid) std::erase_if(records, [&](const LogRecord& old) { return old.update >= r->update; });
    records.push_back(std::move(*r));
  }
  ATTN_CHECK(!records.empty(),
             "plot: {} has no training or validation record yet (the first comes after --log-interval updates)", path);
  std::stable_sort(records.begin(), records.end(),
                   [](const LogRecord& a, const LogRecord& b) { return a.update < b.update; });
  time_validations(records);
  return records;
}

const std::vector<std::string>& plottable_metrics() {
  static const std::vector<std::string> metrics = {"loss", "nll_loss", "ppl", "lr", "gnorm", "tokens_per_second"};
  return metrics;
}

std::vector<Panel> training_panels(const std::vector<Run>& runs, const std::vector<std::string>& metrics, XAxis x) {
  const std::map<std::string, std::string> titles = {
      {"loss", "loss (bits/token)"}, {"nll_loss", "NLL (bits/token)"}, {"ppl", "perplexity"},
      {"lr", "learning rate"},       {"gnorm", "gradient norm"},      {"tokens_per_second", "target tokens/s"}};
  std::vector<Panel> panels;
  for (const std::string& metric : metrics) {
    ATTN_CHECK(titles.count(metric), "plot: unknown metric '{}' (known: {})", metric,
               fmt::join(plottable_metrics(), ", "));
    Panel panel{titles.at(metric), x == XAxis::kUpdates ? "updates" : "training minutes", metric == "ppl", {}};
    for (const Run& run : runs)
      for (bool valid : {false, true}) {
        Series s{run.label, {}, {}, valid};
        for (const LogRecord& r : run.records)
          if (r.valid == valid && r.values.count(metric))
            s.x.push_back(x == XAxis::kUpdates ? r.update : r.elapsed / 60), s.y.push_back(r.values.at(metric));
        if (!s.x.empty()) panel.series.push_back(std::move(s));
      }
    panels.push_back(std::move(panel));
  }
  return panels;
}

}  // namespace attn::plot
