// Training curves. See training_log.hpp.
#include "apps/plotting/training_log.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "data/text_io.hpp"

namespace attn::plot {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLogName = "train_log.jsonl";

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
  if (r.valid) r.subset = j.contains("subset") && j["subset"].is_string() ? j["subset"].get<std::string>() : "valid";
  r.update = j["update"].get<double>();
  for (const auto& [key, value] : j.items())
    if (value.is_number() && key != "update") r.values[key] = value.get<double>();
  if (auto e = r.values.find("elapsed"); e != r.values.end()) r.elapsed = e->second;
  return r;
}

// A run resumed from an earlier checkpoint logs its updates again: a training record for
// update u replaces every record before it at u or later. So a record stays when its update is
// below every later training record's, which one pass from the end finds.
std::vector<LogRecord> without_redone_updates(std::vector<LogRecord> records) {
  std::vector<LogRecord> kept;
  double later_training = std::numeric_limits<double>::infinity();  // the lowest update of those after
  for (auto r = records.rbegin(); r != records.rend(); ++r) {
    const double update = r->update;
    const bool training = !r->valid;
    if (update < later_training) kept.push_back(std::move(*r));
    if (training) later_training = std::min(later_training, update);
  }
  std::reverse(kept.begin(), kept.end());
  return kept;
}

// Validation records without their time (logs written before they carried "elapsed") take the
// time their update had: interpolated by update between the training records around it, or
// past the last one at the run's mean rate up to it. The time of the training record before
// would stack the validations of the updates between two records into one column.
void time_validations(std::vector<LogRecord>& records) {
  std::vector<std::pair<double, double>> timed = {{0.0, 0.0}};  // (update, elapsed), ascending
  for (const LogRecord& r : records)
    if (!r.valid && r.elapsed) timed.emplace_back(r.update, *r.elapsed);
  if (timed.size() == 1) return;  // no training time to go by
  for (LogRecord& r : records) {
    if (!r.valid || r.elapsed) continue;
    const double update = std::max(r.update, 0.0);
    const auto after =
        std::upper_bound(timed.begin(), timed.end(), update,
                         [](double u, const std::pair<double, double>& point) { return u < point.first; });
    const auto [u0, t0] = *std::prev(after);  // timed starts at update 0
    const double rate = after != timed.end() ? (after->second - t0) / (after->first - u0) : u0 > 0 ? t0 / u0 : 0.0;
    r.elapsed = t0 + rate * (update - u0);
  }
}

// A run's path folder by folder, absolute: its save dir's, or its log file's when that is not
// the save dir's train_log.jsonl.
std::vector<std::string> name_parts(const std::string& run) {
  fs::path path = fs::absolute(run).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();  // "dir/"
  if (path.filename() == kLogName) path = path.parent_path();
  std::vector<std::string> parts;
  for (const fs::path& part : path.relative_path()) parts.push_back(part.string());
  return parts;
}

// Whether a and b both have `parts` parts or more, the last `parts` of them the same.
bool ends_alike(const std::vector<std::string>& a, const std::vector<std::string>& b, size_t parts) {
  return a.size() >= parts && b.size() >= parts && std::equal(a.end() - long(parts), a.end(), b.end() - long(parts));
}

bool has_time(const Run& run) {
  return std::ranges::any_of(run.records, [](const LogRecord& r) { return r.elapsed.has_value(); });
}

// Every run a legend entry of its own, and against minutes, a time to place it by.
void check_runs(const std::vector<Run>& runs, XAxis x) {
  for (size_t i = 0; i < runs.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      ATTN_CHECK(runs[j].label != runs[i].label,
                 "plot: runs {} and {} are both labelled '{}'; each run needs a label of its own", j + 1, i + 1,
                 runs[i].label);
    ATTN_CHECK(x == XAxis::kUpdates || has_time(runs[i]),
               "plot: no record of run '{}' has \"elapsed\" (its training time); plot it against updates (--x updates)",
               runs[i].label);
  }
}

// Where a record sits on the x axis; against minutes, none for a record whose time is unknown.
std::optional<double> x_of(const LogRecord& r, XAxis x) {
  if (x == XAxis::kUpdates) return r.update;
  return r.elapsed ? std::optional(*r.elapsed / 60) : std::nullopt;
}

}  // namespace

std::vector<LogRecord> read_training_log(const std::string& path) {
  std::ifstream in = data::open_input_file(path);
  std::vector<LogRecord> records;
  size_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (std::optional<LogRecord> r = parse_record(line, fmt::format("{}:{}", path, line_number)))
      records.push_back(std::move(*r));
  }
  data::check_read(in, path);
  const auto first_validation = std::ranges::find_if(records, [](const LogRecord& r) { return r.valid; });
  if (first_validation != records.end())
    std::erase_if(records, [subset = first_validation->subset](const LogRecord& r) {
      return r.valid && r.subset != subset;
    });
  records = without_redone_updates(std::move(records));
  ATTN_CHECK(!records.empty(),
             "plot: {} has no training or validation record yet (the first comes after --log-interval updates)", path);
  std::stable_sort(records.begin(), records.end(),
                   [](const LogRecord& a, const LogRecord& b) { return a.update < b.update; });
  time_validations(records);
  return records;
}

std::string training_log_of(const std::string& run) {
  return fs::is_directory(run) ? (fs::path(run) / kLogName).string() : run;
}

std::vector<std::string> run_labels(const std::vector<std::string>& runs) {
  std::vector<std::vector<std::string>> names;  // each run's path, folder by folder
  for (const std::string& run : runs) names.push_back(name_parts(run));
  std::vector<std::string> labels;
  std::map<std::string, int> times_named;
  for (const std::vector<std::string>& name : names) {
    size_t parts = 1;
    while (parts < name.size() && std::ranges::any_of(names, [&](const std::vector<std::string>& other) {
             return other != name && ends_alike(other, name, parts);
           }))
      ++parts;
    std::string label = name.empty() ? "/" : fmt::format("{}", fmt::join(name.end() - long(parts), name.end(), "/"));
    const int times = ++times_named[label];
    labels.push_back(times == 1 ? label : fmt::format("{} ({})", label, times));
  }
  return labels;
}

const std::vector<std::string>& plottable_metrics() {
  static const std::vector<std::string> metrics = {"loss", "nll_loss", "ppl", "lr", "gnorm", "tokens_per_second"};
  return metrics;
}

std::vector<Panel> training_panels(const std::vector<Run>& runs, const std::vector<std::string>& metrics, XAxis x) {
  check_runs(runs, x);
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
          if (const std::optional<double> at = x_of(r, x); r.valid == valid && r.values.count(metric) && at)
            s.x.push_back(*at), s.y.push_back(r.values.at(metric));
        if (!s.x.empty()) panel.series.push_back(std::move(s));
      }
    panels.push_back(std::move(panel));
  }
  return panels;
}

}  // namespace attn::plot
