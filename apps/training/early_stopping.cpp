// See early_stopping.hpp.
#include "apps/training/early_stopping.hpp"

#include <fmt/format.h>

namespace attn::app {

void EarlyStopping::observe(int64_t update, double loss) {
  if (update == last_update_) return;  // the same weights again
  last_update_ = update;
  if (!best_ || loss < *best_) {
    best_ = loss;
    validations_without_improvement_ = 0;
  } else {
    ++validations_without_improvement_;
  }
}

std::optional<std::string> EarlyStopping::stop_reason() const {
  if (patience_ <= 0 || validations_without_improvement_ < patience_) return std::nullopt;
  return fmt::format("early stop: the validation loss has not improved on {:.3f} for the last {} validations (--patience {})",
                     *best_, validations_without_improvement_, patience_);
}

nlohmann::json EarlyStopping::state() const {
  return {{"best_loss", best_ ? nlohmann::json(*best_) : nlohmann::json(nullptr)},
          {"validations_without_improvement", validations_without_improvement_},
          {"last_update", last_update_}};
}

void EarlyStopping::restore(const nlohmann::json& state) {
  const nlohmann::json& best = state.at("best_loss");
  best_ = best.is_null() ? std::nullopt : std::optional<double>(best.get<double>());
  validations_without_improvement_ = state.at("validations_without_improvement").get<int64_t>();
  last_update_ = state.at("last_update").get<int64_t>();
}

}  // namespace attn::app
