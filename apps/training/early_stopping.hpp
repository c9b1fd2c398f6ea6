// --patience N (fairseq's early stopping): training stops once N validations in a row have
// not improved on the best value of the metric that picks checkpoint_best — the validation
// loss (lower is better), or BLEU with --best-checkpoint-metric bleu (higher is better) — seen
// so far. Every validation counts — at the end of
// each epoch and every --validate-interval-updates — but a weight state counts once: a
// second validation at the same update (one a resumed run repeats) is not a further "no
// improvement". The state goes into each
// checkpoint's metadata ("early_stopping"), so a resumed run stops where an uninterrupted
// one would; --reset-meters starts it afresh, like the best loss.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "apps/training/validation_metric.hpp"

namespace attn::app {

class EarlyStopping {
 public:
  EarlyStopping(int64_t patience, ValidationMetric metric) : patience_(patience), metric_(metric) {}

  // Counts the metric's value for the weights after `update` updates.
  void observe(int64_t update, double value);
  // Why training should stop now ("the validation loss has not improved ..."), or nothing:
  // always nothing when patience <= 0 (the default: no early stopping).
  std::optional<std::string> stop_reason() const;

  nlohmann::json state() const;
  // Restores state() as saved (its fields checked by the trainer's resume checks), unless it
  // counted another metric (the run's --best-checkpoint-metric changed): then it starts afresh.
  void restore(const nlohmann::json& state);

 private:
  int64_t patience_;
  ValidationMetric metric_;
  std::optional<double> best_;
  int64_t validations_without_improvement_ = 0;
  int64_t last_update_ = -1;  // of the last validation counted
};

}  // namespace attn::app
