// `attnlab train DATA_DIR`: fairseq-train for translation with fairseq's flag names
// (docs/models.md §1.6–1.9; the loop is apps/training/trainer.hpp). Under `mpirun -np N`
// the N processes train one model data-parallel (apps/training/data_parallel.hpp; the world
// comes from the launcher, dist/world.hpp); an error on any rank ends them all.
#include <algorithm>
#include <memory>
#include <sstream>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/training/gpu_ranks.hpp"
#include "apps/training/trainer.hpp"
#include "core/device_runtime.hpp"
#include "data/post_process.hpp"
#include "dist/world.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::app {
namespace {

struct TrainCommandArgs {
  TrainerOptions options;
  dist::WorldOptions world;
  std::map<std::string, std::string> model_values;  // by config field name
  std::map<std::string, bool> model_switches;
  std::vector<std::string> model_overrides;
  std::string adam_betas = "(0.9, 0.999)";
  std::string lr = "0.25";
  std::string progress = "auto";
  bool no_epoch_checkpoints = false, no_last_checkpoints = false;
  std::string eval_bleu_args = "{}", eval_bleu_detok_args = "{}";
  bool maximize_best_checkpoint_metric = false;
  std::string valid_subset = "valid";
  bool disable_validation = false;
  // fairseq flags whose meaning here is another flag's, or that are refused (apply_fairseq_flags).
  std::string log_format;
  bool no_progress_bar = false, cpu = false;
  std::string half_precision_flag;  // --fp16, --bf16, ... when one was given
};

// fairseq-train's flags that attnlab reads as what they mean here, or refuses with the reason:
// --criterion cross_entropy is label smoothing 0; --log-format and --no-progress-bar choose the
// --progress display; --cpu is --device cpu; half-precision training is not attnlab's.
void apply_fairseq_flags(TrainCommandArgs& args) {
  TrainerOptions& options = args.options;
  ATTN_CHECK(options.criterion != "cross_entropy" || options.label_smoothing == 0.0,
             "train: --label-smoothing {} belongs to --criterion label_smoothed_cross_entropy; --criterion "
             "cross_entropy has none",
             options.label_smoothing);
  ATTN_CHECK(args.log_format != "json",
             "train: --log-format json: every record goes to SAVE_DIR/train_log.jsonl as JSON already; the "
             "display is simple (lines), tqdm (a bar) or none");
  if (args.progress == "auto") {
    if (args.log_format == "simple" || args.no_progress_bar) args.progress = "lines";
    else if (args.log_format == "tqdm") args.progress = "bar";
    else if (args.log_format == "none") args.progress = "none";
  }
  ATTN_CHECK(!args.cpu || options.compute.device == "cpu", "train: --cpu and --device {} ask for two devices",
             options.compute.device);
  ATTN_CHECK(args.half_precision_flag.empty(),
             "train: {}: attnlab trains with float32 weights and activations; --matmul-precision bf16 gives "
             "bfloat16 matrix products with float32 sums (CPUs with AVX512-BF16 or AMX, and GPUs)",
             args.half_precision_flag);
}

// "(0.9, 0.98)", "0.9,0.98" or "0.9 0.98" -> numbers.
std::vector<double> parse_number_list(std::string text, const char* flag) {
  for (char& c : text)
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == ',') c = ' ';
  std::istringstream in(text);
  std::vector<double> values;
  for (double v; in >> v;) values.push_back(v);
  if (!in.eof() || values.empty()) throw Error(fmt::format("{}: cannot read numbers from '{}'", flag, text));
  return values;
}

// Checks a model flag's value when the command line is read, with the config's own reader:
// "--encoder-layers: must be an integer, got '1.5'". The override it becomes would fail only
// after the data is loaded, naming the config's field and not the flag.
CLI::Validator config_value(const std::string& field) {
  return CLI::Validator([field](std::string& text) { return nn::config_value_problem(field, text); }, "");
}

int run_train(TrainCommandArgs& args) {
  TrainerOptions& options = args.options;
  apply_fairseq_flags(args);
  const std::vector<double> betas = parse_number_list(args.adam_betas, "--adam-betas");
  if (betas.size() != 2) throw Error(fmt::format("--adam-betas takes two numbers, got '{}'", args.adam_betas));
  options.adam_beta1 = betas[0];
  options.adam_beta2 = betas[1];
  options.lr = parse_number_list(args.lr, "--lr");
  for (const auto& [key, value] : args.model_values)
    if (!value.empty()) options.model_overrides.push_back(key + "=" + value);
  for (const auto& [key, on] : args.model_switches)
    if (on) options.model_overrides.push_back(key + "=true");
  options.model_overrides.insert(options.model_overrides.end(), args.model_overrides.begin(), args.model_overrides.end());
  options.progress = args.progress == "bar" ? ProgressMode::kBar
                     : args.progress == "lines" ? ProgressMode::kLines
                     : args.progress == "none"  ? ProgressMode::kQuiet
                                                : ProgressMode::kAuto;
  options.checkpoints.save_epoch_checkpoints = !args.no_epoch_checkpoints;
  options.checkpoints.save_last = !args.no_last_checkpoints;
  options.eval_bleu.search = parse_eval_bleu_args(args.eval_bleu_args);
  options.eval_bleu.detok_language = parse_eval_bleu_detok_args(args.eval_bleu_detok_args);
  if (args.disable_validation) options.valid_subsets.clear();
  else options.valid_subsets = parse_split_list(args.valid_subset, "--valid-subset");
  // fairseq minimises any metric unless told otherwise; here the flag must agree with the metric.
  const bool bleu = parse_validation_metric(options.best_checkpoint_metric) == ValidationMetric::bleu;
  ATTN_CHECK(!bleu || args.maximize_best_checkpoint_metric,
             "train: --best-checkpoint-metric bleu needs --maximize-best-checkpoint-metric (higher BLEU is better)");
  ATTN_CHECK(bleu || !args.maximize_best_checkpoint_metric,
             "train: --maximize-best-checkpoint-metric goes with --best-checkpoint-metric bleu "
             "(a lower loss is better)");
  options.checkpoints.best_metric = options.best_checkpoint_metric;
  options.checkpoints.maximize_best_metric = bleu;
  ATTN_CHECK(options.checkpoints.keep_best_checkpoints == 0 || !options.valid_subsets.empty(),
             "train: --keep-best-checkpoints keeps the saves of the best validation scores; with "
             "--disable-validation there are none");
  const std::shared_ptr<dist::Communicator> world = dist::join_world(args.world);
  try {
    dist::check_world_matches(*world, args.world);
    options.compute.device = device_of_rank(options.compute.device, *world);
    const Device device = parse_device(options.compute.device);
    use_device(device);
    Trainer trainer(options, world, gpu_gradient_communicator(*world, device));
    trainer.train();
  } catch (const std::exception& e) {
    // The other ranks may be waiting in a collective for this one: end them all.
    if (world->size() > 1)
      world->abort(fmt::format("attnlab: error on rank {} of {}: {} (stopping all ranks)", world->rank(), world->size(),
                               e.what()),
                   1);
    throw;
  }
  return 0;
}

CommandAction setup_train(CLI::App& cmd) {
  auto args = std::make_shared<TrainCommandArgs>();
  TrainerOptions& o = args->options;
  add_data_dir_argument(cmd, o.data_dir, "Preprocessed data dir (attnlab preprocess)");
  cmd.add_option("-s,--source-lang", o.source_lang, "Source language (default: inferred)");
  cmd.add_option("-t,--target-lang", o.target_lang, "Target language (default: inferred)");
  cmd.add_option("--bpe-codes", o.bpe_codes, "BPE codes of the data, recorded for `attnlab translate`");
  // model
  cmd.add_option("-a,--arch", o.arch, "Model preset (transformer_tiny, transformer_wmt_en_de, ...)")->capture_default_str();
  // Every model flag comes from the config's field table (nn/transformer/transformer_config.hpp)
  // and is forwarded to it as a "key=value" override.
  for (const nn::ConfigFlag& flag : nn::config_flags()) {
    std::string name = "--" + flag.name;
    std::replace(name.begin(), name.end(), '_', '-');
    if (flag.is_switch) cmd.add_flag(name, args->model_switches[flag.name], flag.help);
    else cmd.add_option(name, args->model_values[flag.name], flag.help)->check(config_value(flag.name));
  }
  cmd.add_option("--model-override", args->model_overrides, "Any config field: key=value (repeatable)");
  cmd.add_option("--label-smoothing", o.label_smoothing, "Label smoothing epsilon")->capture_default_str();
  cmd.add_option("--criterion", o.criterion,
                 "label_smoothed_cross_entropy, or cross_entropy (the same without --label-smoothing)")
      ->check(CLI::IsMember({"label_smoothed_cross_entropy", "cross_entropy"}))
      ->capture_default_str();
  cmd.add_option("--task", "translation (the one task here)")->check(CLI::IsMember({"translation"}));
  // optimizer and schedule
  cmd.add_option("--optimizer", o.optimizer, "adam | nag")->check(CLI::IsMember({"adam", "nag"}))->capture_default_str();
  cmd.add_option("--adam-betas", args->adam_betas, "Adam betas, e.g. '(0.9, 0.98)'")->capture_default_str();
  cmd.add_option("--adam-eps", o.adam_eps, "Adam epsilon")->check(positive_number())->capture_default_str();
  cmd.add_option("--momentum", o.momentum, "NAG momentum")->capture_default_str();
  cmd.add_option("--weight-decay,--wd", o.weight_decay, "Decoupled weight decay")->capture_default_str();
  cmd.add_option("--clip-norm", o.clip_norm, "Clip gradients to this global norm (0: off)")->capture_default_str();
  cmd.add_option("--ema-decay", o.ema_decay,
                 "Keep an exponential moving average of the weights with this decay, in (0, 1) (0: none); "
                 "checkpoints and validation then hold the average")
      ->check(number_in_range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--ema-start-update", o.ema_start_update, "Before this update the moving average copies the weights")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--ema-update-freq", o.ema_update_freq,
                 "The moving average takes its step (or, before --ema-start-update, its copy) every N updates")
      ->check(positive_number())
      ->capture_default_str();
  cmd.add_option("--lr-scheduler", o.lr_scheduler,
                 "inverse_sqrt | cosine | fixed | polynomial_decay | reduce_lr_on_plateau")
      ->check(CLI::IsMember({"inverse_sqrt", "cosine", "fixed", "polynomial_decay", "reduce_lr_on_plateau"}))
      ->capture_default_str();
  cmd.add_option("--lr", args->lr, "Learning rate (fixed, polynomial_decay: a comma-separated list per epoch)")
      ->capture_default_str();
  cmd.add_option("--warmup-updates", o.warmup_updates,
                 "Warmup updates (default: 4000 for inverse_sqrt, 0 for the others, as in fairseq)");
  // fairseq reads any negative value of these two as unset; only its -1 is taken here, so that a
  // typo (-5, or 0 for a period) is not silently the default.
  cmd.add_option("--warmup-init-lr", o.warmup_init_lr, "Initial warmup lr (-1: 0, or --min-lr for cosine)")
      ->check(finite_number_that([](double v) { return v >= 0 || v == -1; }, " >= 0 (or -1: unset)", "LR|-1"));
  cmd.add_option("--lr-period-updates", o.lr_period_updates, "Cosine period (-1: max-update - warmup)")
      ->check(finite_number_that([](double v) { return v >= 1 || v == -1; }, " >= 1 (or -1: unset)", "N|-1"));
  cmd.add_option("--t-mult", o.t_mult, "Cosine period growth factor")->capture_default_str();
  cmd.add_option("--lr-shrink", o.lr_shrink, "Cosine per-cycle / fixed per-epoch / reduce_lr_on_plateau shrink")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--max-lr", o.max_lr, "Cosine peak (old flags: then --lr is the floor, --min-lr the stop)");
  cmd.add_option("--min-lr", o.min_lr, "Cosine floor, or with --max-lr the lr at or below which training stops");
  cmd.add_option("--stop-min-lr", o.stop_min_lr, "Stop when an epoch ends with the lr at or below this (-1: never)")
      ->capture_default_str();
  cmd.add_option("--force-anneal", o.force_anneal,
                 "fixed: shrink the lr from this epoch on; polynomial_decay: restart the decay from the current lr")
      ->check(non_negative_number());
  cmd.add_option("--end-learning-rate", o.end_learning_rate, "polynomial_decay: the lr the decay ends at")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--power", o.power, "polynomial_decay: the decay's exponent")->capture_default_str();
  cmd.add_option("--total-num-update", o.total_num_update,
                 "polynomial_decay: updates over which the lr decays (default: --max-update)")
      ->check(positive_number());
  cmd.add_option("--lr-threshold", o.lr_threshold,
                 "reduce_lr_on_plateau: the relative improvement of the validation metric that counts")
      ->capture_default_str();
  cmd.add_option("--lr-patience", o.lr_patience,
                 "reduce_lr_on_plateau: epochs without improvement before the lr shrinks")
      ->check(non_negative_number())
      ->capture_default_str();
  // batches and stopping
  cmd.add_option("--max-tokens", o.max_tokens, "Tokens per batch, padding included")->check(positive_number());
  cmd.add_option("--max-sentences,--batch-size", o.max_sentences, "Sentences per batch")->check(positive_number());
  cmd.add_option("--required-batch-size-multiple", o.required_batch_size_multiple,
                 "A batch cut keeps a multiple of this many sentences (fairseq's default is 8)")
      ->check(positive_number())
      ->capture_default_str();
  cmd.add_option("--max-tokens-valid", o.valid_max_tokens, "Validation batches' tokens (default: --max-tokens)")
      ->check(positive_number());
  cmd.add_option("--batch-size-valid", o.valid_max_sentences, "Validation batches' sentences (default: --batch-size)")
      ->check(positive_number());
  cmd.add_option("--train-subset", o.train_subset,
                 "The split trained on, with SPLIT1, SPLIT2, ... after it when the data dir holds them")
      ->capture_default_str();
  cmd.add_option("--upsample-primary", o.upsample_primary,
                 "Repeat the training split's first part N times when SPLIT1, ... are combined with it")
      ->check(positive_number())
      ->capture_default_str();
  cmd.add_flag_callback("--skip-invalid-size-inputs-valid-test", [] {},
                        "Accepted for fairseq commands: validation always skips pairs too long for the model or "
                        "--max-tokens-valid, and reports how many");
  cmd.add_option("--num-workers", "Accepted for fairseq commands: batches come from the memory-mapped splits in this "
                                  "process")
      ->check(non_negative_number());
  cmd.add_option("--update-freq", o.update_freq, "Accumulate gradients over N batches")->capture_default_str();
  cmd.add_option("--max-update", o.max_update, "Stop after N updates (0: no limit)");
  cmd.add_option("--max-epoch", o.max_epoch, "Stop after N epochs (0: no limit)");
  CLI::Option* minutes =
      cmd.add_option("--max-time-minutes", o.max_time_minutes, "Stop after this much training time (0: no limit)")
          ->check(non_negative_number());
  cmd.add_option_function<double>(
         "--stop-time-hours",
         [&o](double hours) {
           o.max_time_minutes = 60.0 * hours;
           o.time_limit_in_hours = true;
         },
         "Stop after this many hours of training time, fairseq's flag (--max-time-minutes in hours)")
      ->check(non_negative_number())
      ->excludes(minutes);
  cmd.add_option("--curriculum", o.curriculum,
                 "Take the batches of the first N epochs in length order, shortest first, unshuffled (fairseq's flag)")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "Random seed")->capture_default_str();
  add_compute_options(cmd, o.compute);
  // checkpoints and logging
  cmd.add_option("--save-dir", o.save_dir, "Checkpoint folder")->capture_default_str();
  cmd.add_option("--restore-file", o.restore_file, "Resume from this checkpoint (default: the save dir's newest)");
  cmd.add_option("--finetune-from-model", o.finetune_from_model,
                 "Start from this checkpoint's weights only (when the save dir has none to resume from)");
  cmd.add_flag("--reset-optimizer", o.reset.optimizer, "Restore without the optimizer state, update count and schedule");
  cmd.add_flag("--reset-lr-scheduler", o.reset.lr_scheduler, "Restore without the schedule's state");
  cmd.add_flag("--reset-meters", o.reset.meters, "Restore without best loss, skipped updates and training time");
  cmd.add_flag("--reset-dataloader", o.reset.dataloader, "Restore without the data position (epoch 1, fresh --seed)");
  cmd.add_option("--save-interval-updates", o.checkpoints.save_interval_updates, "checkpoint_E_U every N updates");
  cmd.add_option("--keep-last-epochs", o.checkpoints.keep_last_epochs, "Keep the newest N epoch checkpoints");
  cmd.add_option("--keep-interval-updates", o.checkpoints.keep_interval_updates, "Keep the newest N update checkpoints");
  cmd.add_option("--keep-interval-updates-pattern", o.checkpoints.keep_interval_updates_pattern,
                 "With --keep-interval-updates, also keep every update checkpoint whose update is a multiple of N");
  cmd.add_option("--keep-best-checkpoints", o.checkpoints.keep_best_checkpoints,
                 "Also keep the N validated saves of the best --best-checkpoint-metric, as "
                 "checkpoint.best_METRIC_SCORE_UPDATES (0: none)")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_flag("--no-epoch-checkpoints", args->no_epoch_checkpoints, "Only checkpoint_last / _best at epoch ends");
  cmd.add_flag("--no-last-checkpoints", args->no_last_checkpoints,
               "No checkpoint_last (a resume starts from the newest checkpoint there is)");
  cmd.add_flag("--no-save", o.no_save, "Write no checkpoint (the run cannot be resumed)");
  cmd.add_flag("--no-save-optimizer-state", o.no_save_optimizer_state,
               "Save checkpoints without the optimizer state (smaller; a resume starts the optimizer's moments "
               "afresh, as fairseq's flag)");
  cmd.add_option("--log-file", o.log_file, "Also append the progress lines to this file");
  cmd.add_option("--tensorboard-logdir", o.tensorboard_logdir,
                 "Also write the training log's losses, learning rate, speed and scores as TensorBoard event files "
                 "under this folder (runs train_inner, valid, ... as fairseq's)");
  cmd.add_option("--validate-interval-updates", o.validate_interval_updates, "Also validate every N updates");
  cmd.add_option("--validate-interval", o.validate_interval, "Validate at every Nth epoch end (and at the run's end)")
      ->check(positive_number())
      ->capture_default_str();
  cmd.add_option("--save-interval", o.save_interval, "Save at every Nth epoch end (and at the run's end)")
      ->check(positive_number())
      ->capture_default_str();
  cmd.add_option("--validate-after-updates", o.validate_after_updates,
                 "No validation, nor --save-interval-updates save, before this many updates")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--valid-subset", args->valid_subset,
                 "Comma-separated splits to validate on (valid,valid1,test); the first picks checkpoint_best and "
                 "drives --patience")
      ->capture_default_str();
  cmd.add_flag("--disable-validation", args->disable_validation,
               "Train without validating (no valid split needed; no checkpoint_best)");
  cmd.add_option("--patience", o.patience,
                 "Stop when N validations in a row have not improved on the best --best-checkpoint-metric "
                 "(<= 0: never)");
  cmd.add_flag("--eval-bleu", o.eval_bleu.enabled, "Also translate the validation split and score it with sacreBLEU");
  cmd.add_option("--eval-bleu-args", args->eval_bleu_args,
                 "Generation options of --eval-bleu as JSON, e.g. '{\"beam\": 4, \"max_len_a\": 1.2, "
                 "\"max_len_b\": 10}' (keys: beam, lenpen, max_len_a, max_len_b, min_len, no_repeat_ngram_size, unkpen)");
  cmd.add_option("--eval-bleu-detok", o.eval_bleu.detok, "--eval-bleu: space (no detokenization) | moses")
      ->check(CLI::IsMember({"space", "moses"}))
      ->capture_default_str();
  cmd.add_option("--eval-bleu-detok-args", args->eval_bleu_detok_args,
                 "--eval-bleu-detok moses settings as JSON, e.g. '{\"target_lang\": \"de\"}' (default: the task's "
                 "target language; fairseq's is en)")
      ->capture_default_str();
  add_optional_choice(cmd, "--eval-bleu-remove-bpe", o.eval_bleu.remove_bpe,
                      "--eval-bleu: post-process hypotheses and references before scoring as fairseq's --post-process "
                      "(given alone: remove subword-nmt's '@@ ')",
                      data::post_process_schemes());
  cmd.add_flag("--eval-tokenized-bleu", o.eval_bleu.tokenized_bleu,
               "--eval-bleu: score the text as it is (sacreBLEU tokenizer none) instead of 13a");
  cmd.add_flag("--eval-bleu-print-samples", o.eval_bleu.print_samples,
               "--eval-bleu: print the first validation sentence's translation and reference");
  cmd.add_option("--best-checkpoint-metric", o.best_checkpoint_metric,
                 "What picks checkpoint_best (and --patience counts): loss, or bleu with --eval-bleu")
      ->check(CLI::IsMember({"loss", "bleu"}))
      ->capture_default_str();
  cmd.add_flag("--maximize-best-checkpoint-metric", args->maximize_best_checkpoint_metric,
               "Higher is better (required with --best-checkpoint-metric bleu, as in fairseq commands)");
  cmd.add_option("--log-interval", o.log_interval, "Progress line every N updates")->capture_default_str();
  cmd.add_option("--progress", args->progress, "auto | bar | lines | none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
      ->capture_default_str();
  cmd.add_option("--log-format", args->log_format, "fairseq's name for --progress: simple (lines), tqdm (bar), none")
      ->check(CLI::IsMember({"simple", "tqdm", "none", "json"}));
  cmd.add_flag("--no-progress-bar", args->no_progress_bar, "fairseq's name for --progress lines");
  cmd.add_flag("--cpu", args->cpu, "fairseq's name for --device cpu (the default)");
  for (const std::string flag : {"--fp16", "--bf16", "--amp", "--memory-efficient-fp16"})
    cmd.add_flag_callback(flag, [args, flag] { args->half_precision_flag = flag; }, "Refused: see --matmul-precision");
  // distributed (dist/world.hpp)
  cmd.add_option("--distributed-world-size", args->world.world_size,
                 "Number of ranks; under mpirun it must equal -np (default: what the launcher started)")
      ->check(positive_number());
  cmd.add_option("--distributed-rank", args->world.rank,
                 "This process's rank (with --distributed-init-method); under mpirun it must equal MPI's")
      ->check(non_negative_number());
  cmd.add_option("--distributed-init-method", args->world.init_method,
                 "Where ranks started without mpirun meet: tcp://HOST:PORT (rank 0's machine), env:// "
                 "(MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK) or file:///SHARED/DIR");
  cmd.add_option("--ddp-backend", o.gradient_sync.ddp_backend,
                 "c10d: gradients all-reduced in buckets during the backward pass; no_c10d: in one buffer after it")
      ->check(CLI::IsMember({"c10d", "pytorch_ddp", "no_c10d", "legacy_ddp"}))
      ->capture_default_str();
  cmd.add_option("--bucket-cap-mb", o.gradient_sync.bucket_cap_mb, "Gradient bucket size in MiB (c10d)")
      ->check(positive_number())
      ->capture_default_str();
  cmd.add_flag("--skip-invalid-updates", o.skip_invalid_updates, "Skip updates with NaN/inf instead of stopping");
  return [args] { return run_train(*args); };
}

const CommandRegistration train_command("train", "Train a translation model (fairseq-train flags)", setup_train);

}  // namespace
}  // namespace attn::app
