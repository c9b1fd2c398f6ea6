// Learning-rate schedules (docs/models.md §1.8). See lr_scheduler.hpp.
#include "nn/lr_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

// --- polynomial_decay ---

PolynomialDecayScheduler::PolynomialDecayScheduler(const PolynomialDecayOptions& options) : options_(options) {
  ATTN_CHECK(!options_.lr.empty(), "polynomial_decay schedule: --lr needs at least one value");
  for (double lr : options_.lr) check_learning_rate(lr, "polynomial_decay", "every --lr value");
  check_learning_rate(options_.end_learning_rate, "polynomial_decay", "--end-learning-rate");
  ATTN_CHECK(std::isfinite(options_.power), "polynomial_decay schedule: --power must be finite, got {}", options_.power);
  ATTN_CHECK(options_.total_num_update > 0,
             "polynomial_decay schedule: the decay needs its length: pass --total-num-update or --max-update (got {})",
             options_.total_num_update);
  ATTN_CHECK(!options_.force_anneal || *options_.force_anneal >= 0,
             "polynomial_decay schedule: --force-anneal is an epoch, must be >= 0, got {}", *options_.force_anneal);
  ATTN_CHECK(options_.warmup_updates >= 0, "polynomial_decay schedule: --warmup-updates must be >= 0, got {}",
             options_.warmup_updates);
  peak_lr_ = options_.lr.front();
  warmup_factor_ = options_.warmup_updates > 0 ? 1.0 / double(options_.warmup_updates) : 1.0;
  lr_ = warmup_factor_ * peak_lr_;
}

double PolynomialDecayScheduler::step_begin_epoch(int64_t epoch) {
  // A run resumed inside an epoch begins it again; with --force-anneal that would restart the
  // decay from a later lr than the uninterrupted run did.
  if (epoch == epoch_) return lr_;
  epoch_ = epoch;
  const auto& lrs = options_.lr;
  if (!options_.force_anneal || epoch < *options_.force_anneal)
    peak_lr_ = lrs[size_t(std::min<int64_t>(epoch, int64_t(lrs.size()) - 1))];  // the 1-based epoch indexes the list
  else
    peak_lr_ = lr_;  // annealing: the decay restarts from where the last epoch left the lr
  lr_ = warmup_factor_ * peak_lr_;
  return lr_;
}

double PolynomialDecayScheduler::step_update(int64_t num_updates) {
  const int64_t warmup = options_.warmup_updates;
  const double total = options_.total_num_update;
  if (warmup > 0 && num_updates <= warmup) {
    warmup_factor_ = double(num_updates) / double(warmup);
    lr_ = warmup_factor_ * peak_lr_;
  } else if (double(num_updates) >= total) {
    lr_ = options_.end_learning_rate;
  } else {
    const double remaining = 1.0 - double(num_updates - warmup) / (total - double(warmup));
    lr_ = (peak_lr_ - options_.end_learning_rate) * std::pow(remaining, options_.power) + options_.end_learning_rate;
  }
  return lr_;
}

nlohmann::json PolynomialDecayScheduler::state_dict() const {
  nlohmann::json state = LRScheduler::state_dict();
  state["peak_lr"] = peak_lr_;
  state["warmup_factor"] = warmup_factor_;
  state["epoch"] = epoch_;
  return state;
}

void PolynomialDecayScheduler::load_state_dict(const nlohmann::json& state) {
  LRScheduler::load_state_dict(state);
  peak_lr_ = state_number(state, name(), "peak_lr");
  warmup_factor_ = state_number(state, name(), "warmup_factor");
  epoch_ = int64_t(state_number(state, name(), "epoch"));
}

// --- reduce_lr_on_plateau ---

ReduceLROnPlateauScheduler::ReduceLROnPlateauScheduler(const ReduceLROnPlateauOptions& options) : options_(options) {
  check_learning_rate(options_.lr, "reduce_lr_on_plateau", "--lr");
  ATTN_CHECK(std::isfinite(options_.lr_shrink) && options_.lr_shrink >= 0 && options_.lr_shrink < 1,
             "reduce_lr_on_plateau schedule: --lr-shrink must be >= 0 and < 1, got {}", options_.lr_shrink);
  ATTN_CHECK(std::isfinite(options_.lr_threshold), "reduce_lr_on_plateau schedule: --lr-threshold must be finite, got {}",
             options_.lr_threshold);
  ATTN_CHECK(options_.lr_patience >= 0, "reduce_lr_on_plateau schedule: --lr-patience must be >= 0, got {}",
             options_.lr_patience);
  ATTN_CHECK(options_.warmup_updates >= 0, "reduce_lr_on_plateau schedule: --warmup-updates must be >= 0, got {}",
             options_.warmup_updates);
  if (options_.warmup_init_lr < 0) options_.warmup_init_lr = options_.warmup_updates > 0 ? 0.0 : options_.lr;
  check_learning_rate(options_.warmup_init_lr, "reduce_lr_on_plateau", "--warmup-init-lr");
  lr_step_ = options_.warmup_updates > 0 ? (options_.lr - options_.warmup_init_lr) / double(options_.warmup_updates) : 0.0;
  warmup_end_ = options_.warmup_updates == 0;
  lr_ = warmup_end_ ? options_.lr : options_.warmup_init_lr;
  best_ = options_.maximize ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
}

bool ReduceLROnPlateauScheduler::improves(double metric) const {
  const double threshold = options_.lr_threshold;
  return options_.maximize ? metric > best_ * (threshold + 1.0) : metric < best_ * (1.0 - threshold);
}

double ReduceLROnPlateauScheduler::step(int64_t /*epoch*/, double metric) {
  if (!warmup_end_) return lr_;  // epochs that end inside the warmup do not count
  if (improves(metric)) {
    best_ = metric;
    bad_epochs_ = 0;
  } else {
    ++bad_epochs_;
  }
  if (bad_epochs_ > options_.lr_patience) {
    // A change of at most 1e-8 is not made (torch's eps), but the count restarts anyway.
    const double reduced = std::max(lr_ * options_.lr_shrink, 0.0);
    if (lr_ - reduced > 1e-8) lr_ = reduced;
    bad_epochs_ = 0;
  }
  return lr_;
}

double ReduceLROnPlateauScheduler::step_update(int64_t num_updates) {
  if (options_.warmup_updates > 0) {
    if (num_updates <= options_.warmup_updates)
      lr_ = options_.warmup_init_lr + double(num_updates) * lr_step_;
    else
      warmup_end_ = true;
  }
  return lr_;
}

nlohmann::json ReduceLROnPlateauScheduler::state_dict() const {
  nlohmann::json state = LRScheduler::state_dict();
  state["warmup_end"] = warmup_end_;
  state["best"] = std::isfinite(best_) ? nlohmann::json(best_) : nlohmann::json(nullptr);  // JSON has no infinity
  state["bad_epochs"] = bad_epochs_;
  return state;
}

void ReduceLROnPlateauScheduler::load_state_dict(const nlohmann::json& state) {
  LRScheduler::load_state_dict(state);
  ATTN_CHECK(state.contains("warmup_end") && state.at("warmup_end").is_boolean(),
             "{} lr scheduler state: missing boolean field 'warmup_end' in {}", name(), state.dump());
  warmup_end_ = state.at("warmup_end").get<bool>();
  const bool no_best = state.contains("best") && state.at("best").is_null();
  best_ = no_best ? (options_.maximize ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity())
                  : state_number(state, name(), "best");
  bad_epochs_ = int64_t(state_number(state, name(), "bad_epochs"));
}

}  // namespace attn::nn
