// Learning-rate schedules (docs/models.md §1.8). See lr_scheduler.hpp.
#include "nn/lr_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace attn::nn {
namespace {

// A state field, or attn::Error naming the schedule and the field.
double state_number(const nlohmann::json& state, const std::string& schedule, const char* key) {
  ATTN_CHECK(state.is_object() && state.contains(key) && state.at(key).is_number(),
             "{} lr scheduler state: missing numeric field '{}' in {}", schedule, key, state.dump());
  return state.at(key).get<double>();
}

// A learning rate (or a factor on one) the user gave: a negative one would climb the loss, a NaN
// poison every weight.
void check_learning_rate(double lr, const char* schedule, const char* flag) {
  ATTN_CHECK(std::isfinite(lr) && lr >= 0, "{} schedule: {} must be a finite number >= 0, got {}", schedule, flag, lr);
}

double linear_warmup(double init_lr, double end_lr, int64_t warmup_updates, int64_t num_updates) {
  return init_lr + double(num_updates) * ((end_lr - init_lr) / double(warmup_updates));
}

}  // namespace

// --- LRScheduler ---

nlohmann::json LRScheduler::state_dict() const { return {{"name", name()}, {"lr", lr_}}; }

void LRScheduler::load_state_dict(const nlohmann::json& state) {
  ATTN_CHECK(state.is_object() && state.contains("name") && state.at("name").is_string(),
             "lr scheduler state: expected an object with a 'name', got {}", state.dump());
  const std::string saved = state.at("name").get<std::string>();
  ATTN_CHECK(saved == name(), "lr scheduler state was saved by the '{}' schedule, cannot load it into '{}'", saved,
             name());
  lr_ = state_number(state, name(), "lr");
}

double UpdateBasedScheduler::step_update(int64_t num_updates) {
  lr_ = lr_at(num_updates);
  return lr_;
}

// --- inverse_sqrt ---

InverseSqrtScheduler::InverseSqrtScheduler(const InverseSqrtOptions& options)
    : peak_lr_(options.lr),
      warmup_updates_(options.warmup_updates),
      warmup_init_lr_(options.warmup_init_lr < 0 ? 0.0 : options.warmup_init_lr) {
  ATTN_CHECK(warmup_updates_ > 0, "inverse_sqrt schedule: --warmup-updates must be > 0, got {}", warmup_updates_);
  check_learning_rate(peak_lr_, "inverse_sqrt", "--lr");
  check_learning_rate(warmup_init_lr_, "inverse_sqrt", "--warmup-init-lr");  // NaN is not "< 0: unset"
  lr_ = lr_at(0);
}

double InverseSqrtScheduler::lr_at(int64_t num_updates) const {
  if (num_updates < warmup_updates_) return linear_warmup(warmup_init_lr_, peak_lr_, warmup_updates_, num_updates);
  const double decay_factor = peak_lr_ * std::sqrt(double(warmup_updates_));
  return decay_factor * std::pow(double(num_updates), -0.5);
}

// --- cosine ---

CosineScheduler::CosineScheduler(const CosineOptions& options) : options_(options) {
  ATTN_CHECK(options_.warmup_updates >= 0, "cosine schedule: --warmup-updates must be >= 0, got {}",
             options_.warmup_updates);
  check_learning_rate(options_.max_lr, "cosine", "the peak max lr");
  check_learning_rate(options_.min_lr, "cosine", "the floor min lr");
  // A floor above the peak is lowered to it (fairseq does so), which makes the lr constant;
  // it happens before the floor becomes the default warmup start.
  options_.min_lr = std::min(options_.min_lr, options_.max_lr);
  if (options_.warmup_init_lr < 0) options_.warmup_init_lr = options_.min_lr;
  check_learning_rate(options_.warmup_init_lr, "cosine", "--warmup-init-lr");
  ATTN_CHECK(options_.t_mult > 0, "cosine schedule: --t-mult must be > 0, got {}", options_.t_mult);
  check_learning_rate(options_.lr_shrink, "cosine", "--lr-shrink");
  int64_t period = options_.lr_period_updates;
  if (period <= 0) {
    ATTN_CHECK(options_.max_update > options_.warmup_updates,
               "cosine schedule: --lr-period-updates is unset, so --max-update ({}) must exceed --warmup-updates ({})",
               options_.max_update, options_.warmup_updates);
    period = options_.max_update - options_.warmup_updates;
  }
  period_ = double(period);
  lr_ = lr_at(0);
}

CosineScheduler::CyclePosition CosineScheduler::cycle_position(double c) const {
  const double t_mult = options_.t_mult;
  if (t_mult == 1.0) {
    const double i = std::floor(c / period_);
    return {i, period_, c - i * period_};
  }
  const double log_argument = 1.0 - (c / period_) * (1.0 - t_mult);
  ATTN_CHECK(log_argument > 0, "cosine schedule: with --t-mult {} < 1 the cycles end before update {}", t_mult,
             int64_t(c) + options_.warmup_updates);
  const double i = std::floor(std::log(log_argument) / std::log(t_mult));
  const double grown = std::pow(t_mult, i);
  return {i, grown * period_, c - (1.0 - grown) / (1.0 - t_mult) * period_};
}

double CosineScheduler::lr_at(int64_t num_updates) const {
  if (num_updates < options_.warmup_updates)
    return linear_warmup(options_.warmup_init_lr, options_.max_lr, options_.warmup_updates, num_updates);
  const CyclePosition cycle = cycle_position(double(num_updates - options_.warmup_updates));
  const double shrink = std::pow(options_.lr_shrink, cycle.index);
  const double low = options_.min_lr * shrink;
  const double high = options_.max_lr * shrink;
  return low + 0.5 * (high - low) * (1.0 + std::cos(std::numbers::pi * cycle.position / cycle.length));
}

// --- fixed ---

FixedScheduler::FixedScheduler(const FixedOptions& options)
    : options_(options),
      epoch_lr_(0.0),
      warmup_factor_(options.warmup_updates > 0 ? 1.0 / double(options.warmup_updates) : 1.0) {
  ATTN_CHECK(!options_.lr.empty(), "fixed schedule: --lr needs at least one value");
  for (double lr : options_.lr) check_learning_rate(lr, "fixed", "every --lr value");
  check_learning_rate(options_.lr_shrink, "fixed", "--lr-shrink");
  ATTN_CHECK(!options_.force_anneal || *options_.force_anneal >= 0,
             "fixed schedule: --force-anneal is an epoch, must be >= 0, got {}", *options_.force_anneal);
  ATTN_CHECK(options_.warmup_updates >= 0, "fixed schedule: --warmup-updates must be >= 0, got {}",
             options_.warmup_updates);
  epoch_lr_ = options_.lr.front();
  step_update(0);
}

double FixedScheduler::epoch_lr(int64_t epoch) const {
  ATTN_CHECK(epoch >= 1, "fixed schedule: epochs count from 1, got {}", epoch);
  const auto& lrs = options_.lr;
  if (!options_.force_anneal || epoch < *options_.force_anneal)
    return lrs[size_t(std::min<int64_t>(epoch - 1, int64_t(lrs.size()) - 1))];
  return lrs.back() * std::pow(options_.lr_shrink, double(epoch + 1 - *options_.force_anneal));
}

double FixedScheduler::step_begin_epoch(int64_t epoch) {
  epoch_lr_ = epoch_lr(epoch);
  lr_ = warmup_factor_ * epoch_lr_;
  return lr_;
}

double FixedScheduler::step_update(int64_t num_updates) {
  if (options_.warmup_updates > 0 && num_updates < options_.warmup_updates) {
    warmup_factor_ = double(num_updates + 1) / double(options_.warmup_updates);
    lr_ = warmup_factor_ * epoch_lr_;
  } else {
    lr_ = epoch_lr_;
  }
  return lr_;
}

nlohmann::json FixedScheduler::state_dict() const {
  nlohmann::json state = LRScheduler::state_dict();
  state["epoch_lr"] = epoch_lr_;
  state["warmup_factor"] = warmup_factor_;
  return state;
}

void FixedScheduler::load_state_dict(const nlohmann::json& state) {
  LRScheduler::load_state_dict(state);
  epoch_lr_ = state_number(state, name(), "epoch_lr");
  warmup_factor_ = state_number(state, name(), "warmup_factor");
}

}  // namespace attn::nn
