// The training loop of `attnlab train` (fairseq's train.py + trainer.py; docs/models.md
// §1.6–1.9, docs/design.md §6). One update (train_step) does, in the order of §1.9:
//   zero grads → for each of the --update-freq micro-batches: forward, label-smoothed loss
//   (summed), backward (gradients add up) → with several ranks, gradients and counts summed
//   over them → multiply grads by 1/Σ ntokens → clip by global
//   norm (the norm is logged as gnorm) → NaN/inf check → optimizer step →
//   lr = scheduler.step_update(num_updates).
// A non-finite loss or gradient norm stops training with an error naming the update (no
// checkpoint is written after it), or with --skip-invalid-updates drops that update with a
// warning (parameters, optimizer state and the update counter stay as they were).
//
// Epochs follow the batch loader (data/batching.hpp); at the start of each epoch
// scheduler.step_begin_epoch(epoch) and step_update(num_updates) are called (§1.8). At the
// end of an epoch: validation on "valid" (with --eval-bleu also its translations' BLEU:
// bleu_validation.hpp), checkpoint<E>, checkpoint_best (by --best-checkpoint-metric: the
// loss, or BLEU), checkpoint_last;
// every --save-interval-updates: checkpoint_<E>_<U> (apps/training/checkpoint.hpp). Training stops at
// --max-update, --max-epoch, --max-time-minutes (counted over resumed runs too), when an
// old-style cosine schedule's lr falls below --min-lr, or after --patience validations
// without a new best loss (early_stopping.hpp).
//
// With core/profiler.hpp enabled, the phases of train_step are timed as "trainer: forward +
// loss", "trainer: backward" and "trainer: normalise, clip, optimizer step" (bench/bench_train).
//
// When training starts, the dictionaries and the --bpe-codes file are copied into the save
// dir (apps/task/translation_task.hpp keep_task_beside), which its checkpoints then refer to.
// Checkpoints hold everything the loop depends on — weights, optimizer moments and step
// counts, scheduler state, the default generator (dropout), the loader position, counters,
// best loss — so a run interrupted after update n and resumed produces bit-identical
// parameters to an uninterrupted run (same thread count). Resuming: --restore-file, else
// the save dir's newest checkpoint that loads completely (checkpoints_newest_first: by
// update count and data position; newer ones that are torn are reported and skipped). A
// save dir with checkpoints none of which loads is an error (the --reset-* flags and
// --restore-file start from one on purpose), never a silent restart that would overwrite
// them. After resuming, the save that wrote the checkpoint is finished (its other names,
// rotation: finish_interrupted_save), and a run that had reached its end before a kill cut
// off its final validation does that validation and checkpoint_best update in train()
// ("validated" in the metadata). An exact resume needs the same model configuration and
// optimizer; the metadata keys a resume reads are checked first (a wrong type or an
// impossible value is an error naming the file and key).
//
// The dropout of micro-batch i of an update draws from the default generator at counter
// (offset at the update's start + i·DataParallel::kMicroBatchCounters), and the update leaves
// the offset at its start + (number of micro-batches)·kMicroBatchCounters: the masks depend on
// the micro-batch's place in the update, not on what the micro-batches before it drew, so
// ranks running different micro-batches of one update draw what one process would.
//
// The save dir is locked for the trainer's lifetime (save_dir_lock.hpp), and before resuming
// the leftovers of interrupted saves are removed (remove_incomplete_saves).
//
// Data parallel (apps/training/data_parallel.hpp): in a world of N ranks each update takes
// N·--update-freq batches from the loader, every rank trains on its share of them, and the
// gradients and counts are summed over the ranks before the normalisation; rank 0 alone
// locks the save dir, writes checkpoints and the train log, and prints progress.
//
// With --ema-decay d the trainer also keeps θ̄, the exponential moving average of the weights
// (nn/exponential_moving_average.hpp), updated after every update. Validation (and so
// checkpoint_best) measures θ̄; every checkpoint's weights file holds θ̄ — what generate,
// translate, average and inspect use — and its optimizer file holds the trained weights θ
// ("trained.<name>") for an exact resume. Resuming a checkpoint of an EMA run without
// --ema-decay, or the reverse, is an error unless --reset-optimizer (then training starts from
// the weights file, and a new average from them).
//
// Starting from another run's weights (fairseq's flags): --reset-optimizer,
// --reset-lr-scheduler, --reset-meters and --reset-dataloader drop those parts of the
// restored checkpoint (ResetOptions); --finetune-from-model CKPT, when the save dir has
// nothing to resume from, takes only CKPT's weights (all four reset) — the finetune step of
// swap-then-finetune after `attnlab convert`. Once the finetuning run has saved, it resumes
// from its own save dir like any run. Weights load strictly: a tensor missing, unexpected or
// of another shape is an error naming it; other differences of configuration (dropout, a
// feature map without weights of its own) are listed, not refused.
#pragma once
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "apps/training/bleu_validation.hpp"
#include "apps/training/checkpoint.hpp"
#include "apps/training/early_stopping.hpp"
#include "apps/cli/compute_options.hpp"
#include "apps/training/data_parallel.hpp"
#include "apps/training/evaluation.hpp"
#include "apps/training/save_dir_lock.hpp"
#include "apps/training/tensorboard_log.hpp"
#include "apps/cli/progress.hpp"
#include "apps/task/translation_task.hpp"
#include "data/batching.hpp"
#include "dist/single_process_communicator.hpp"
#include "nn/criterion.hpp"
#include "nn/exponential_moving_average.hpp"
#include "nn/lr_scheduler.hpp"
#include "nn/optimizer.hpp"

namespace attn::app {

enum class ProgressMode { kAuto, kBar, kLines, kQuiet };

// What a restore leaves out of a checkpoint (fairseq's --reset-* flags).
struct ResetOptions {
  bool optimizer = false;     // optimizer state and kind, the update count, the schedule's state
  bool lr_scheduler = false;  // the schedule's state (its lr is recomputed at the update count)
  bool meters = false;        // best validation loss, skipped-update count, training time
  bool dataloader = false;    // the epoch and batch position and the random stream (--seed)
  bool any() const { return optimizer || lr_scheduler || meters || dataloader; }
};

struct TrainerOptions {
  std::string data_dir;  // DIR, or DIR1:DIR2:... (epoch E trains on DIR((E-1) mod n), as fairseq)
  std::string source_lang, target_lang;  // empty: inferred from the data dir
  std::string bpe_codes;                 // recorded in checkpoints for `attnlab translate`

  // Model: a preset plus "key=value" overrides (nn/transformer/transformer_config.hpp).
  std::string arch = "transformer_tiny";
  std::vector<std::string> model_overrides;
  double label_smoothing = 0.0;
  // fairseq's name of the loss (label_smoothed_cross_entropy, or cross_entropy: the same without
  // label smoothing), recorded for a fairseq trainer that goes on from the checkpoint.
  std::string criterion = "label_smoothed_cross_entropy";

  // Optimizer (§1.7).
  std::string optimizer = "adam";  // adam | nag
  double adam_beta1 = 0.9, adam_beta2 = 0.999, adam_eps = 1e-8;
  double momentum = 0.99;
  double weight_decay = 0.0;
  double clip_norm = 0.0;
  // Exponential moving average of the weights (nn/exponential_moving_average.hpp): 0 = none.
  double ema_decay = 0.0;
  int64_t ema_start_update = 0;  // before this update the average copies the weights
  int64_t ema_update_freq = 1;   // the average takes a step (or copies) every that many updates

  // Schedule (§1.8).
  std::string lr_scheduler = "fixed";  // inverse_sqrt | cosine | fixed | polynomial_decay | reduce_lr_on_plateau
  std::vector<double> lr = {0.25};
  // Unset: each schedule's fairseq default, 4000 for inverse_sqrt (which needs a warmup), 0 otherwise.
  std::optional<int64_t> warmup_updates;
  double warmup_init_lr = -1.0;
  int64_t lr_period_updates = -1;
  double t_mult = 1.0;
  double lr_shrink = 0.1;
  std::optional<double> max_lr;  // cosine, old flags: --max-lr is the peak, --lr the floor
  double min_lr = -1.0;          // cosine floor (current flags) or stop threshold (old flags)
  double stop_min_lr = -1.0;     // current flags: stop once an epoch ends with lr <= this (-1: never)
  std::optional<int64_t> force_anneal;
  double end_learning_rate = 0.0;           // polynomial_decay: the lr at --total-num-update
  double power = 1.0;                       // polynomial_decay: the decay's exponent
  std::optional<double> total_num_update;   // polynomial_decay: the decay's length (unset: --max-update)
  double lr_threshold = 1e-4;               // reduce_lr_on_plateau: the relative improvement that counts
  int64_t lr_patience = 0;                  // reduce_lr_on_plateau: epochs without one before a shrink

  // Batches and stopping.
  int64_t max_tokens = 0, max_sentences = 0, update_freq = 1;
  int64_t required_batch_size_multiple = 1;  // a batch cut keeps a multiple of this many rows
  int64_t curriculum = 0;  // --curriculum N: the first N epochs' batches in length order, unshuffled
  int64_t valid_max_tokens = 0, valid_max_sentences = 0;  // validation batches; 0: as training's
  std::string train_subset = "train";
  // The training split combined with train1, train2, ... when there (fairseq's), its first
  // part repeated this many times then (--upsample-primary).
  size_t upsample_primary = 1;
  int64_t max_update = 0, max_epoch = 0;
  double max_time_minutes = 0.0;
  bool time_limit_in_hours = false;  // given as fairseq's --stop-time-hours: stop messages say so
  uint64_t seed = 1;
  ComputeOptions compute;  // --threads, --matmul-precision
  GradientSyncOptions gradient_sync;  // --ddp-backend, --bucket-cap-mb (data-parallel training)

  // Checkpoints, validation, logging.
  std::string save_dir = "checkpoints";
  bool no_save = false;   // --no-save: no checkpoint at all (a run that cannot be resumed)
  // --no-save-optimizer-state: checkpoints without the optimizer file (Adam's two moments per
  // parameter); a resume goes on from them with fresh moments, not exactly.
  bool no_save_optimizer_state = false;
  std::string log_file;   // --log-file: the progress lines also appended there
  std::string tensorboard_logdir;  // --tensorboard-logdir: the log's records as TensorBoard scalars too
  std::string restore_file;
  std::string finetune_from_model;  // weights to start from when the save dir has no checkpoint
  ResetOptions reset;
  CheckpointPolicy checkpoints;
  int64_t validate_interval_updates = 0;
  // Epoch ends that validate and that save: every Nth (a run's last always does both).
  int64_t validate_interval = 1, save_interval = 1;
  // No validation, and no --save-interval-updates save, before this many updates (fairseq's
  // --validate-after-updates; epoch ends still save).
  int64_t validate_after_updates = 0;
  // Whether a --save-interval-updates save validates first, as fairseq's do (the demo's saves,
  // made only to be averaged, do not: its budget is minutes).
  bool validate_at_update_saves = true;
  // --valid-subset: the splits validated each time, all opened before training starts; the
  // first one's result picks checkpoint_best and drives --patience and the plateau schedule.
  // None (--disable-validation): no validation, no checkpoint_best.
  std::vector<std::string> valid_subsets{"valid"};
  int64_t patience = 0;  // > 0: stop after that many validations in a row without a new best
  BleuValidationOptions eval_bleu;           // --eval-bleu and its options
  std::string best_checkpoint_metric = "loss";  // loss | bleu (bleu: higher is better)
  bool skip_invalid_updates = false;
  int64_t log_interval = 100;
  ProgressMode progress = ProgressMode::kAuto;
};

struct StepResult {
  bool applied = false;  // false: skipped (non-finite loss or gradients)
  double loss_sum = 0.0, nll_sum = 0.0;  // nats, summed over target tokens
  int64_t ntokens = 0, nsentences = 0;
  double gnorm = 0.0;
  double lr = 0.0;  // the lr this update used
};

struct TrainingSummary {
  int64_t num_updates = 0, epoch = 0, skipped_updates = 0;
  std::string stop_reason;
  double seconds = 0.0;             // training time of this run (steps only)
  int64_t target_tokens = 0;        // target tokens trained on in this run
  double tokens_per_second = 0.0;
  std::optional<ValidationResult> last_valid;
  std::optional<double> best_valid_loss;
};

// The "done" record (reason, update, tokens_per_second, elapsed training seconds, peak_tensor_mib
// and peak_resident_mib as peak_memory.hpp measures them at the end) of the last
// run in save_dir/train_log.jsonl that trained at least one update; an empty object when none did
// (no log, or no run trained). A rerun that finds training finished logs tokens/s 0: skipped.
nlohmann::json last_training_summary(const std::string& save_dir);

class Trainer {
 public:
  // Opens the data, builds the model, optimizer, schedule and loader, and resumes from a
  // checkpoint when there is one (see the header comment). `world`: the ranks training
  // together (every one constructs a Trainer with the same options); `gradients`: the
  // communicator that sums their gradients when it is not `world` (NCCL for GPU ranks).
  explicit Trainer(TrainerOptions options,
                   std::shared_ptr<dist::Communicator> world = std::make_shared<dist::SingleProcessCommunicator>(),
                   std::shared_ptr<dist::Communicator> gradients = nullptr);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains until a stop condition holds.
  TrainingSummary train();
  // One update over the given micro-batches (see the header comment); throws attn::Error on
  // a non-finite loss/gradient unless --skip-invalid-updates.
  StepResult train_step(const std::vector<data::Batch>& micro_batches);
  // The same for this rank's micro-batches of an update: slots[i] is micro_batches[i]'s place
  // among the update's `slots_total` batches of all ranks (data_parallel.hpp); it keys the
  // micro-batch's dropout. Returns the sums over all ranks.
  StepResult train_step(const std::vector<data::Batch>& micro_batches, const std::vector<int64_t>& slots,
                        int64_t slots_total);
  // Loss and perplexity on a split of the data dir, in eval mode without gradients.
  ValidationResult validate(const std::string& split);
  // Writes the checkpoints of a save request with the current state, and says so.
  // Its score is these weights' validation's, when they were validated.
  void save(SaveRequest request);

  nn::EncoderDecoderModel& model() { return *model_; }
  const TranslationTask& task() const { return task_; }
  int64_t num_updates() const { return num_updates_; }
  int64_t epoch() const { return loader_->position().epoch; }
  std::optional<std::string> restored_from() const { return restored_from_; }

  // Sums over the applied updates since the last progress line (after_update's `interval`) or
  // since the epoch began (epoch_meters_: fairseq's "train" meters, kept in checkpoints).
  struct IntervalStats {
    double loss_sum = 0.0, nll_sum = 0.0, gnorm_sum = 0.0, seconds = 0.0;
    int64_t ntokens = 0, updates = 0;
    double lr = 0.0;  // the last update's
    int64_t nsentences = 0, clipped = 0;  // clipped: updates whose gradient norm exceeded --clip-norm
    void add(const StepResult& step, double clip_norm);
    // The sums as a checkpoint keeps them (metadata "epoch_meters"), and back; a missing field is 0.
    nlohmann::json state() const;
    static IntervalStats from_state(const nlohmann::json& state);
    // visit(name, field) for every field of `stats` (an IntervalStats, const or not), by its name
    // in a checkpoint: the one list of them.
    template <typename Stats, typename Visit>
    static void for_each_field(Stats& stats, Visit&& visit) {
      visit("loss_sum", stats.loss_sum);
      visit("nll_sum", stats.nll_sum);
      visit("gnorm_sum", stats.gnorm_sum);
      visit("seconds", stats.seconds);
      visit("lr", stats.lr);
      visit("ntokens", stats.ntokens);
      visit("updates", stats.updates);
      visit("nsentences", stats.nsentences);
      visit("clipped", stats.clipped);
    }
  };

 private:
  // A train or train_epoch record of `stats`: the means fairseq logs (loss and nll_loss in bits,
  // ppl, lr, gnorm, tokens_per_second — fairseq's wps —, wpb and bsz per update, ups, train_wall
  // and, with --clip-norm, clip: the percentage of updates clipped) and the elapsed seconds.
  nlohmann::json meter_record(const char* type, int64_t epoch, const IntervalStats& stats) const;
  void build_optimizer();
  // The optimizer's settings as checkpoints record them (metadata "optimizer_options": Adam's
  // betas and eps or NAG's momentum, and the weight decay), for export-fairseq's optimizer state.
  nlohmann::json optimizer_options() const;
  void build_scheduler();
  void resume();
  void resume_from_save_dir();
  // Restores what `reset` keeps from checkpoint `base`; returns its metadata.
  nlohmann::json restore(const std::string& base, const ResetOptions& reset);
  void restore_optimizer(const CheckpointContent& content, const std::string& base, bool reset_lr_scheduler);
  // The update count, and the schedule and lr unless reset_lr_scheduler, from a checkpoint's metadata.
  void restore_schedule(const nlohmann::json& meta, bool reset_lr_scheduler);
  void check_same_dictionaries(const nlohmann::json& task, const std::string& base) const;
  nlohmann::json metadata() const;
  static std::string saved_line(const SaveRequest& request, const std::vector<std::string>& names, double seconds);
  void begin_epoch();
  // fairseq's DIR1:DIR2:...: a data dir after the first that holds dictionaries must hold the
  // first one's, byte for byte (its ids are read with them).
  void check_shard_dictionaries() const;
  // The training split (with its SPLIT1, ... and --upsample-primary) of the data dir that epoch
  // `epoch` reads — DIR((epoch - 1) mod n), fairseq's order —, its loader at the start of that
  // epoch; nothing when that dir's split is the one read now.
  void use_train_shard(int64_t epoch);
  std::optional<std::string> stop_reason(bool end_of_epoch) const;
  double progress_fraction() const;
  double training_seconds() const;
  // Counts and logs the update, validates where --validate-interval-updates or a
  // --save-interval-updates save asks; returns that save's request, which train() carries out
  // unless the run stops or the epoch ends here (their save writes these weights then).
  // `ending_epoch`: the epoch this update is the last of, if it is.
  std::optional<SaveRequest> after_update(const StepResult& step, IntervalStats& interval, TrainingSummary& summary,
                                          std::optional<int64_t> ending_epoch);
  // Whether the end of the run (--max-update) or of `ending_epoch` will validate the weights of
  // this update (end_of_epoch_or_stop), logging them with the best so far.
  bool end_validates_this_update(std::optional<int64_t> ending_epoch) const;
  // At the end of an epoch (end_of_epoch) or of the run (stopping; both when the run ends with
  // its epoch): validates and saves as --validate-interval and --save-interval say.
  void end_of_epoch_or_stop(bool end_of_epoch, bool stopping, TrainingSummary& summary);
  // fairseq's end-of-epoch statistics (also at a stop within an epoch): the means over the
  // epoch's updates so far, printed and logged as a train_epoch record; nothing without updates.
  void log_epoch_meters(const IntervalStats& meters, int64_t finished_epoch);
  // Validates every --valid-subset where a checkpoint is saved (an epoch's end, the run's, a
  // --save-interval-updates save) and logs them with the best so far, unless this update's
  // validation was logged already; returns the first's result, is_best telling whether it is a
  // new best.
  ValidationResult validate_with_best(int64_t finished_epoch, bool& is_best);
  // validate() of every --valid-subset, in their order, or the results at this update when
  // they were measured already (a stop right after an interval validation).
  const std::vector<ValidationResult>& validate_these_weights();
  // A --validate-interval-updates validation: counted by --patience, logged without the best.
  void validate_at_interval();
  // "epoch 003 | valid on 'valid1' subset | loss 4.102 | ... | num_updates 900" for the epoch
  // that ended, "valid on 'valid1' subset at update 900 | loss 4.102 | ..." between epoch ends
  // ("valid at update 900 | ..." for the default subset, valid).
  std::string validation_line(size_t subset, const ValidationResult& valid, std::optional<int64_t> ended_epoch) const;
  // The lines and records of the subsets after the first (the first's go with the best so far).
  void log_other_subsets(const std::vector<ValidationResult>& valid, std::optional<int64_t> ended_epoch);
  // Why to stop for a low lr (--min-lr with the old cosine flags, --stop-min-lr), or nothing.
  std::optional<std::string> lr_stop_reason() const;
  // The value --best-checkpoint-metric (and --patience) compare: the loss, or BLEU.
  double best_checkpoint_metric(const ValidationResult& valid) const;
  static std::string validation_text(const ValidationResult& valid);
  nlohmann::json validation_record(const ValidationResult& valid, const std::string& subset, int64_t epoch) const;
  // Opens save_dir/train_log.jsonl for appending (a folder there, or a file that cannot be
  // opened, is an error naming it); log_json writes a record and flushes it, and a failed write
  // (a full disk) is an error naming the log.
  void open_log();
  void log_json(const nlohmann::json& record);
  void info(const std::string& text);  // a progress line, unless --progress none
  std::string state_summary() const;   // what check_same_state compares between ranks

  TrainerOptions options_;
  DataParallel parallel_;
  TranslationTask task_;
  nlohmann::json task_record_;  // the task as checkpoints record it, its files copied into the save dir
  nn::TransformerConfig config_;
  std::shared_ptr<nn::EncoderDecoderModel> model_;
  Device device_;  // where the model, its gradients and the optimizer's state live (--device)
  nn::LabelSmoothedCrossEntropy criterion_;
  std::unique_ptr<nn::Optimizer> optimizer_;
  std::unique_ptr<nn::LRScheduler> scheduler_;
  std::unique_ptr<nn::ExponentialMovingAverage> ema_;  // with --ema-decay
  std::vector<std::string> data_dirs_;  // --data DIR1:DIR2:...: the first's dictionaries and valid splits
  size_t train_shard_ = 0;              // the data dir train_data_ comes from
  std::unique_ptr<SplitCorpora> train_data_;
  std::unique_ptr<data::BatchLoader> loader_;
  std::vector<Tensor> parameters_;
  ProgressDisplay progress_;
  std::string log_path_;
  std::ofstream json_log_;
  std::unique_ptr<TensorBoardLog> tensorboard_;  // with --tensorboard-logdir, on the writing rank

  int64_t num_updates_ = 0;
  int64_t skipped_updates_ = 0;
  IntervalStats epoch_meters_;
  std::optional<double> best_loss_, best_bleu_;
  // The last validation: measured once per update, logged once, ranked against the best once
  // (an interval validation, a save's and an epoch end's at one update are one validation).
  struct UpdateValidation {
    int64_t update = -1;
    std::vector<ValidationResult> results{};     // every --valid-subset's, in their order
    bool told = false;                           // its lines and log records are written
    std::optional<bool> is_best = std::nullopt;  // set once validate_with_best ranked it
  };
  UpdateValidation last_validation_;
  std::map<std::string, SplitCorpora> valid_data_;  // every --valid-subset, opened at the start
  std::set<std::string> splits_with_skips_told_;  // validation splits whose skipped pairs were reported
  ValidationMetric best_metric_ = parse_validation_metric(options_.best_checkpoint_metric);
  EarlyStopping early_stopping_{options_.patience, best_metric_};  // --patience
  bool validated_ = true;  // false after an update, until the next validation (end_of_epoch_or_stop)
  double previous_seconds_ = 0.0;  // training time of the runs this one resumed
  std::chrono::steady_clock::time_point run_start_;
  std::optional<std::string> restored_from_;
  std::unique_ptr<SaveDirLock> save_dir_lock_;  // taken before resuming, released when the trainer goes
};

}  // namespace attn::app
