// --best-checkpoint-metric: the validation figure that picks checkpoint_best and drives
// --patience — the loss (lower is better) or, with --eval-bleu, BLEU (higher is better). The
// direction of each lives here only.
#pragma once
#include <optional>
#include <string>

namespace attn::app {

enum class ValidationMetric { loss, bleu };

// "loss" or "bleu"; anything else is an error naming --best-checkpoint-metric.
ValidationMetric parse_validation_metric(const std::string& name);
const char* validation_metric_name(ValidationMetric metric);
// True when value is better than best in the metric's direction, and when there is no best yet.
bool improves(ValidationMetric metric, double value, std::optional<double> best);

}  // namespace attn::app
