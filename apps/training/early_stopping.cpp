// See early_stopping.hpp.
#include "apps/training/early_stopping.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace attn::app {

void EarlyStopping::observe(int64_t update, double value) {
  if (update == last_update_) return;  // the same weights again
  last_update_ = update;
  if (improves(metric_, value, best_)) {
    best_ = value;
    validations_without_improvement_ = 0;
  } else {
    ++validations_without_improvement_;
  }
}

std::optional<std::string> EarlyStopping::stop_reason() const {
  if (patience_ <= 0 || validations_without_improvement_ < patience_) return std::nullopt;
  return fmt::format("early stop: the validation {} has not improved on {:.3f} for the last {} validations "
                     "(--patience {})",
                     validation_metric_name(metric_), *best_, validations_without_improvement_, patience_);
}

nlohmann::json EarlyStopping::state() const {
  return {{"metric", validation_metric_name(metric_)},
          {"best", best_ ? nlohmann::json(*best_) : nlohmann::json(nullptr)},
          {"validations_without_improvement", validations_without_improvement_},
          {"last_update", last_update_}};
}

void EarlyStopping::restore(const nlohmann::json& state) {
  // Counted for another metric: start afresh.
  if (state.value("metric", "loss") != validation_metric_name(metric_)) return;
  const nlohmann::json& best = state.at("best");
  best_ = best.is_null() ? std::nullopt : std::optional<double>(best.get<double>());
  validations_without_improvement_ = state.at("validations_without_improvement").get<int64_t>();
  last_update_ = state.at("last_update").get<int64_t>();
}

}  // namespace attn::app
