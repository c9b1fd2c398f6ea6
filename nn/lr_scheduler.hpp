// Learning-rate schedules, updated per update as fairseq does (docs/models.md §1.8).
//
// The trainer owns the update counter and drives a schedule like fairseq's trainer:
//   lr = sched.lr();                      // schedule(0), before update 1
//   at the start of each epoch e (1-based, after n updates so far):
//     sched.step_begin_epoch(e); lr = sched.step_update(n);
//   after update n:                       lr = sched.step_update(n);
// so update n+1 runs with schedule(n). Each call returns the lr to hand to the optimizer.
//
// * InverseSqrt: linear warmup from warmup_init_lr to lr over W updates, then lr·√W/√n.
// * Cosine: linear warmup to max_lr, then cosine cycles between max_lr and min_lr with warm
//   restarts (period P, period growth t_mult, per-cycle shrink s^i). A min_lr above max_lr is
//   lowered to max_lr (a constant lr), as fairseq does.
//   Flag names changed in Nov 2020 (§1.8 table): with the old flags `--max-lr A --lr B
//   --min-lr C`, pass max_lr = A and min_lr = B (C is the trainer's stop threshold); with the
//   current flags `--lr A --min-lr B --stop-min-lr C`, the same.
// * Fixed: fairseq's `fixed` schedule (the spec is silent; this follows fairseq's
//   fixed_schedule.py): `--lr` is a per-epoch list (the last value repeats), from epoch
//   `--force-anneal` on the lr shrinks by `--lr-shrink` per epoch, and during the first
//   `--warmup-updates` updates the epoch lr is scaled by (n+1)/W.
// * PolynomialDecay: linear warmup to the epoch's lr over W updates, then a decay
//   (lr - end)·(1 - (n-W)/(T-W))^power + end down to `--end-learning-rate` at update T. Epoch e
//   takes lr[min(e, len-1)] (fairseq indexes the list by the 1-based epoch); from epoch
//   `--force-anneal` on, the epoch instead restarts the decay from the lr it begins with.
// * ReduceLROnPlateau: linear warmup from warmup_init_lr to lr, then the lr is multiplied by
//   `--lr-shrink` whenever the validation metric passed to step() has not improved by the
//   relative `--lr-threshold` for more than `--lr-patience` epochs (torch's ReduceLROnPlateau
//   with threshold_mode 'rel', cooldown 0, min_lr 0, eps 1e-8).
//
// State: state_dict() / load_state_dict() as JSON, enough to continue bit-identically after
// a resume (the schedule's options come from the run's config, not from the state).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attn::nn {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  virtual std::string name() const = 0;
  // The learning rate the optimizer should use now.
  double lr() const { return lr_; }
  // Called at the start of epoch `epoch` (1-based); returns the lr to use.
  virtual double step_begin_epoch(int64_t epoch) { return lr_; }
  // Called after update `num_updates` (1-based); returns the lr for the next update.
  virtual double step_update(int64_t num_updates) = 0;
  // Called when epoch `epoch` ends, with the validation metric it measured (the trainer then
  // calls step_update); returns the lr to use. Only reduce_lr_on_plateau reads the metric.
  virtual double step(int64_t epoch, double metric) { return lr_; }

  virtual nlohmann::json state_dict() const;
  // Throws attn::Error when the state belongs to another schedule or misses a field.
  virtual void load_state_dict(const nlohmann::json& state);

 protected:
  double lr_ = 0.0;
};

// A schedule whose lr is a pure function of the update count.
class UpdateBasedScheduler : public LRScheduler {
 public:
  virtual double lr_at(int64_t num_updates) const = 0;
  double step_update(int64_t num_updates) override;
};

struct InverseSqrtOptions {
  double lr = 5e-4;               // --lr: the peak, reached at the end of warmup
  int64_t warmup_updates = 4000;  // --warmup-updates (must be > 0, as in fairseq)
  double warmup_init_lr = -1.0;   // --warmup-init-lr; < 0 means 0
};

class InverseSqrtScheduler : public UpdateBasedScheduler {
 public:
  explicit InverseSqrtScheduler(const InverseSqrtOptions& options);
  std::string name() const override { return "inverse_sqrt"; }
  double lr_at(int64_t num_updates) const override;

 private:
  double peak_lr_;
  int64_t warmup_updates_;
  double warmup_init_lr_;
};

struct CosineOptions {
  double max_lr = 1e-3;            // the top of each cycle (old --max-lr, current --lr)
  double min_lr = 0.0;             // the cosine floor (old --lr, current --min-lr)
  int64_t warmup_updates = 0;      // --warmup-updates
  double warmup_init_lr = -1.0;    // --warmup-init-lr; < 0 means min_lr
  int64_t lr_period_updates = -1;  // --lr-period-updates; <= 0 means max_update - warmup
  double t_mult = 1.0;             // --t-mult
  double lr_shrink = 0.1;          // --lr-shrink
  int64_t max_update = 0;          // --max-update, needed only when lr_period_updates <= 0
};

class CosineScheduler : public UpdateBasedScheduler {
 public:
  explicit CosineScheduler(const CosineOptions& options);
  std::string name() const override { return "cosine"; }
  double lr_at(int64_t num_updates) const override;

 private:
  struct CyclePosition {
    double index;     // i: how many restarts happened
    double length;    // t_i: length of the current cycle in updates
    double position;  // t_cur: updates since the current cycle started
  };
  CyclePosition cycle_position(double updates_after_warmup) const;

  CosineOptions options_;
  double period_;
};

struct FixedOptions {
  std::vector<double> lr = {0.25};       // --lr: the lr of epoch 1, 2, ...; the last repeats
  std::optional<int64_t> force_anneal{}; // --force-anneal: first epoch that shrinks
  double lr_shrink = 0.1;                // --lr-shrink
  int64_t warmup_updates = 0;            // --warmup-updates
};

class FixedScheduler : public LRScheduler {
 public:
  explicit FixedScheduler(const FixedOptions& options);
  std::string name() const override { return "fixed"; }
  double step_begin_epoch(int64_t epoch) override;
  double step_update(int64_t num_updates) override;
  // The lr of epoch `epoch` before warmup scaling.
  double epoch_lr(int64_t epoch) const;

  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state) override;

 private:
  FixedOptions options_;
  double epoch_lr_;
  double warmup_factor_;
};

struct PolynomialDecayOptions {
  std::vector<double> lr = {0.25};        // --lr: lr[min(epoch, len-1)] is epoch `epoch`'s peak
  std::optional<int64_t> force_anneal{};  // --force-anneal: from this epoch on, decay from the current lr
  double end_learning_rate = 0.0;         // --end-learning-rate
  double power = 1.0;                     // --power
  double total_num_update = 0;            // --total-num-update (the trainer passes --max-update if unset)
  int64_t warmup_updates = 0;             // --warmup-updates
};

class PolynomialDecayScheduler : public LRScheduler {
 public:
  explicit PolynomialDecayScheduler(const PolynomialDecayOptions& options);
  std::string name() const override { return "polynomial_decay"; }
  double step_begin_epoch(int64_t epoch) override;
  double step_update(int64_t num_updates) override;

  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state) override;

 private:
  PolynomialDecayOptions options_;
  double peak_lr_;        // the lr the warmup climbs to and the decay starts from
  double warmup_factor_;  // the last warmup fraction, used by step_begin_epoch
  int64_t epoch_ = 0;     // the epoch begun last: a resume inside it must not begin it twice
};

struct ReduceLROnPlateauOptions {
  double lr = 0.25;               // --lr (a single value)
  double lr_shrink = 0.1;         // --lr-shrink: the factor applied on a plateau, in [0, 1)
  double lr_threshold = 1e-4;     // --lr-threshold: the relative improvement that counts
  int64_t lr_patience = 0;        // --lr-patience: epochs without improvement tolerated
  int64_t warmup_updates = 0;     // --warmup-updates
  double warmup_init_lr = -1.0;   // --warmup-init-lr; < 0 means 0 with a warmup, lr without
  bool maximize = false;          // --maximize-best-checkpoint-metric: higher is better
};

class ReduceLROnPlateauScheduler : public LRScheduler {
 public:
  explicit ReduceLROnPlateauScheduler(const ReduceLROnPlateauOptions& options);
  std::string name() const override { return "reduce_lr_on_plateau"; }
  double step(int64_t epoch, double metric) override;
  double step_update(int64_t num_updates) override;

  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state) override;

 private:
  bool improves(double metric) const;

  ReduceLROnPlateauOptions options_;
  double lr_step_;            // the warmup's increment per update
  bool warmup_end_;           // set by the first step_update past the warmup; plateaus count from then
  double best_;               // the best metric so far (+inf, or -inf when maximising, before any)
  int64_t bad_epochs_ = 0;    // epochs since the best one
};

}  // namespace attn::nn
