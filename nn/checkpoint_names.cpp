// Numbered checkpoint names. See checkpoint_names.hpp.
#include "nn/checkpoint_names.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/core.h>

#include "core/error.hpp"

namespace attn::nn {
namespace {

const std::string kPrefix = "checkpoint";

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::string epoch_checkpoint_name(int64_t epoch) { return fmt::format("{}{}", kPrefix, epoch); }

std::string update_checkpoint_name(int64_t epoch, int64_t updates) {
  return fmt::format("{}_{}_{}", kPrefix, epoch, updates);
}

std::optional<int64_t> checkpoint_number(const std::string& name, CheckpointNumbering numbering) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const std::string rest = name.substr(kPrefix.size());
  if (numbering == CheckpointNumbering::Epoch) return all_digits(rest) ? std::optional(std::stoll(rest)) : std::nullopt;
  // "_<epoch>_<update>"
  const size_t second = rest.find('_', 1);
  if (rest.empty() || rest[0] != '_' || second == std::string::npos) return std::nullopt;
  const std::string epoch = rest.substr(1, second - 1), update = rest.substr(second + 1);
  return all_digits(epoch) && all_digits(update) ? std::optional(std::stoll(update)) : std::nullopt;
}

std::string best_checkpoint_name(const std::string& metric, double score, int64_t updates) {
  return fmt::format("{}.best_{}_{:.3f}_{}", kPrefix, metric, score, updates);
}

std::optional<BestCheckpointName> parse_best_checkpoint_name(const std::string& name) {
  const std::string prefix = kPrefix + ".best_";
  if (!name.starts_with(prefix)) return std::nullopt;
  const size_t updates_at = name.rfind('_'), score_at = name.rfind('_', updates_at - 1);
  if (score_at < prefix.size() || score_at == updates_at) return std::nullopt;  // no metric, or one '_'
  const std::string metric = name.substr(prefix.size(), score_at - prefix.size());
  const std::string score = name.substr(score_at + 1, updates_at - score_at - 1), updates = name.substr(updates_at + 1);
  const size_t point = score.find('.');
  if (metric.empty() || point == std::string::npos || !all_digits(score.substr(0, point)) ||
      !all_digits(score.substr(point + 1)) || !all_digits(updates))
    return std::nullopt;
  return BestCheckpointName{metric, std::stod(score), std::stoll(updates)};
}

std::vector<NumberedCheckpoint> numbered_checkpoints(const std::string& dir, CheckpointNumbering numbering,
                                                     const std::string& extension) {
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  ATTN_CHECK(!error, "cannot list {}: {}", dir, error.message());
  std::vector<NumberedCheckpoint> found;
  for (const auto& entry : it) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(extension)) continue;
    if (auto number = checkpoint_number(file.substr(0, file.size() - extension.size()), numbering))
      found.push_back({*number, entry.path().string()});
  }
  std::sort(found.begin(), found.end(), [](const NumberedCheckpoint& a, const NumberedCheckpoint& b) {
    return a.number != b.number ? a.number > b.number : a.path > b.path;
  });
  return found;
}

}  // namespace attn::nn
