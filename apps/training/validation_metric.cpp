// See validation_metric.hpp.
#include "apps/training/validation_metric.hpp"

#include "core/error.hpp"

namespace attn::app {

ValidationMetric parse_validation_metric(const std::string& name) {
  if (name == "loss") return ValidationMetric::loss;
  ATTN_CHECK(name == "bleu", "train: --best-checkpoint-metric is loss or bleu, got '{}'", name);
  return ValidationMetric::bleu;
}

const char* validation_metric_name(ValidationMetric metric) {
  return metric == ValidationMetric::bleu ? "bleu" : "loss";
}

bool improves(ValidationMetric metric, double value, std::optional<double> best) {
  if (!best) return true;
  return metric == ValidationMetric::bleu ? value > *best : value < *best;
}

}  // namespace attn::app
