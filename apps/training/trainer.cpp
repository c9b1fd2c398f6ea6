// The training loop (docs/models.md §1.6–1.9). See trainer.hpp.
#include "apps/training/trainer.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <numbers>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/task/batch_tensors.hpp"
#include "apps/training/peak_memory.hpp"
#include "autograd/autograd.hpp"
#include "core/profiler.hpp"
#include "core/rng.hpp"
#include "data/bpe_apply.hpp"
#include "data/text_io.hpp"
#include "nn/adam.hpp"
#include "nn/grad_clip.hpp"
#include "nn/nag.hpp"

namespace attn::app {
namespace fs = std::filesystem;
namespace {

// fairseq's DIR1:DIR2:...: the data dirs whose training splits the epochs read in turn.
std::vector<std::string> split_data_dirs(const std::string& text) {
  std::vector<std::string> dirs;
  std::istringstream in(text + ":");
  for (std::string dir; std::getline(in, dir, ':');) {
    ATTN_CHECK(!dir.empty(), "train: an empty data dir in '{}' (give DIR, or DIR1:DIR2:... for one per epoch)", text);
    dirs.push_back(dir);
  }
  return dirs;
}

std::unique_ptr<data::BatchLoader> make_train_loader(const SplitCorpora& corpora, const TrainerOptions& options,
                                                     const nn::TransformerConfig& config) {
  data::BatchingOptions batching;
  batching.max_tokens = options.max_tokens;
  batching.max_sentences = options.max_sentences;
  batching.required_batch_size_multiple = options.required_batch_size_multiple;
  batching.curriculum = options.curriculum;
  batching.max_source_positions = config.max_source_positions;
  batching.max_target_positions = config.max_target_positions;
  batching.oversize = data::OversizePolicy::kFilter;
  batching.seed = options.seed;
  return std::make_unique<data::BatchLoader>(corpora.source, corpora.target, batching);
}

// The codes are read as translate will read them: a folder or a malformed line is an error
// naming the file (and line) now, not at the first translate after training.
void check_bpe_codes(const std::string& path) {
  try {
    data::BpeCodes::read(path);
  } catch (const std::exception& e) {
    throw Error(fmt::format("train: --bpe-codes: {}", e.what()));
  }
}

bool progress_is_live(ProgressMode mode) {
  return mode == ProgressMode::kBar || (mode == ProgressMode::kAuto && ProgressDisplay::is_terminal(stdout));
}

double bits(double nats_sum, int64_t ntokens) {
  return ntokens > 0 ? nats_sum / double(ntokens) / std::numbers::ln2 : 0.0;
}

// "loss 3.912 | nll_loss 3.101 | ppl 8.58 | lr 0.0005 | gnorm 0.812 | tok/s 6640": a train or
// train_epoch record (Trainer::meter_record) in the progress lines.
std::string meter_text(const nlohmann::json& record) {
  return fmt::format("loss {:.3f} | nll_loss {:.3f} | ppl {:.2f} | lr {:.4g} | gnorm {:.3f} | tok/s {:.0f}",
                     record.at("loss").get<double>(), record.at("nll_loss").get<double>(),
                     record.at("ppl").get<double>(), record.at("lr").get<double>(), record.at("gnorm").get<double>(),
                     record.at("tokens_per_second").get<double>());
}

// The value at a dotted key ("loader.epoch") of a JSON object, or null when absent.
nlohmann::json value_at(const nlohmann::json& object, const std::string& dotted_key) {
  const nlohmann::json* value = &object;
  for (size_t begin = 0; begin <= dotted_key.size();) {
    const size_t end = std::min(dotted_key.find('.', begin), dotted_key.size());
    const std::string key = dotted_key.substr(begin, end - begin);
    if (!value->is_object() || !value->contains(key)) return nullptr;
    value = &(*value)[key];
    begin = end + 1;
  }
  return *value;
}

// The metadata keys restore() reads (those the reset flags do not drop), checked before
// anything is restored: a wrong type or an impossible value is an error naming the file and
// the key, never a JSON library error or a half-restored trainer.
void check_resume_metadata(const nlohmann::json& meta, const std::string& json_path, const ResetOptions& reset) {
  auto require = [&](const std::string& key, bool optional, const char* expected, auto&& valid) {
    const nlohmann::json value = value_at(meta, key);
    if ((optional && value.is_null()) || valid(value)) return;
    throw CheckpointError(fmt::format("checkpoint {}: key \"metadata.{}\" must be {}, got {}", json_path, key,
                                      expected, value.is_null() ? "nothing" : value.dump()));
  };
  auto count_from = [](int64_t least) {
    return [least](const nlohmann::json& v) {
      const bool fits = v.is_number_integer() &&
                        (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()));
      return fits && v.get<int64_t>() >= least;
    };
  };
  auto is_unsigned = [](const nlohmann::json& v) { return v.is_number_unsigned(); };
  auto non_negative_number = [](const nlohmann::json& v) {
    return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
  };
  auto is_string = [](const nlohmann::json& v) { return v.is_string(); };
  auto is_object = [](const nlohmann::json& v) { return v.is_object(); };
  auto is_bool = [](const nlohmann::json& v) { return v.is_boolean(); };
  require("model_config", false, "an object", is_object);
  require("task.source_dict.checksum", false, "a string", is_string);
  require("task.target_dict.checksum", false, "a string", is_string);
  if (!reset.optimizer) {
    require("optimizer", false, "a string", is_string);
    require("num_updates", false, "a count >= 0", count_from(0));
    require("optimizer_state_saved", true, "true or false", is_bool);  // absent before --no-save-optimizer-state
    if (!reset.lr_scheduler) {
      require("scheduler", false, "an object", is_object);
      require("lr", false, "a finite number >= 0", non_negative_number);
    }
  }
  if (!reset.dataloader) {
    require("rng.seed", false, "an unsigned integer", is_unsigned);
    require("rng.offset", false, "an unsigned integer", is_unsigned);
    require("loader.epoch", false, "an epoch >= 1", count_from(1));
    require("loader.batch_index", false, "a count >= 0", count_from(0));
  }
  if (!reset.meters) {
    auto finite_or_null = [](const nlohmann::json& v) {
      return v.is_null() || (v.is_number() && std::isfinite(v.get<double>()));
    };
    require("best_loss", false, "null or a finite number", finite_or_null);
    require("best_bleu", true, "null or a finite number", finite_or_null);  // absent before --eval-bleu
    // Checkpoints written before --patience existed have no record: it starts afresh.
    const bool no_early_stopping = value_at(meta, "early_stopping").is_null();
    require("early_stopping.best", no_early_stopping, "null or a finite number", finite_or_null);
    require("early_stopping.validations_without_improvement", no_early_stopping, "a count >= 0", count_from(0));
    require("early_stopping.last_update", no_early_stopping, "a count >= -1", count_from(-1));
    require("early_stopping.metric", true, "a string", is_string);
    require("skipped_updates", true, "a count >= 0", count_from(0));
    // Checkpoints written before the epoch statistics have none: the epoch's start afresh.
    const Trainer::IntervalStats no_meters;
    Trainer::IntervalStats::for_each_field(no_meters, [&](const char* name, const auto& field) {
      const std::string key = std::string("epoch_meters.") + name;
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, double>)
        require(key, true, "a finite number",
                [](const nlohmann::json& v) { return v.is_number() && std::isfinite(v.get<double>()); });
      else
        require(key, true, "a count >= 0", count_from(0));
    });
    require("training_seconds", true, "a finite number >= 0", non_negative_number);
    require("validated", true, "true or false", is_bool);
  }
  const bool no_save_record = value_at(meta, "save").is_null();
  require("save.epoch", no_save_record, "an epoch >= 1", count_from(1));
  require("save.end_of_epoch", no_save_record, "true or false", is_bool);
  require("save.is_best", no_save_record, "true or false", is_bool);
  require("save.score", true, "a finite number", [](const nlohmann::json& v) {
    return v.is_number() && std::isfinite(v.get<double>());
  });
}

}  // namespace

void Trainer::IntervalStats::add(const StepResult& step, double clip_norm) {
  loss_sum += step.loss_sum;
  nll_sum += step.nll_sum;
  ntokens += step.ntokens;
  nsentences += step.nsentences;
  gnorm_sum += step.gnorm;
  clipped += clip_norm > 0 && step.gnorm > clip_norm;
  lr = step.lr;
  ++updates;
}

nlohmann::json Trainer::IntervalStats::state() const {
  nlohmann::json state = nlohmann::json::object();
  for_each_field(*this, [&](const char* name, const auto& field) { state[name] = field; });
  return state;
}

Trainer::IntervalStats Trainer::IntervalStats::from_state(const nlohmann::json& state) {
  IntervalStats stats;
  for_each_field(stats,
                 [&](const char* name, auto& field) { field = state.value(name, std::decay_t<decltype(field)>{}); });
  return stats;
}

nlohmann::json Trainer::meter_record(const char* type, int64_t epoch, const IntervalStats& stats) const {
  const double loss = bits(stats.loss_sum, stats.ntokens), nll = bits(stats.nll_sum, stats.ntokens);
  const double updates = double(std::max<int64_t>(stats.updates, 1));
  nlohmann::json record = {{"type", type},
                           {"epoch", epoch},
                           {"update", num_updates_},
                           {"loss", loss},
                           {"nll_loss", nll},
                           {"ppl", std::exp2(nll)},
                           {"lr", stats.lr},
                           {"gnorm", stats.gnorm_sum / updates},
                           {"tokens_per_second", stats.seconds > 0 ? double(stats.ntokens) / stats.seconds : 0.0},
                           {"wpb", double(stats.ntokens) / updates},
                           {"bsz", double(stats.nsentences) / updates},
                           {"ups", stats.seconds > 0 ? double(stats.updates) / stats.seconds : 0.0},
                           {"train_wall", stats.seconds},
                           {"elapsed", training_seconds()}};
  if (options_.clip_norm > 0) record["clip"] = 100.0 * double(stats.clipped) / updates;
  return record;
}

Trainer::Trainer(TrainerOptions options, std::shared_ptr<dist::Communicator> world,
                 std::shared_ptr<dist::Communicator> gradients)
    : options_(std::move(options)),
      parallel_(std::move(world), options_.gradient_sync, std::move(gradients)),
      criterion_(options_.label_smoothing, data::Dictionary::kPad),
      progress_(stdout, parallel_.is_writer() && progress_is_live(options_.progress)),
      run_start_(std::chrono::steady_clock::now()) {
  if (!parallel_.is_writer()) options_.progress = ProgressMode::kQuiet;
  if (parallel_.is_writer() && !options_.log_file.empty()) progress_.copy_lines_to(options_.log_file);
  // The inputs in the order a user fixes them: the data, then the batch flags, then the model.
  data_dirs_ = split_data_dirs(options_.data_dir);
  task_ = open_translation_task(data_dirs_.front(), options_.source_lang, options_.target_lang);
  if (!options_.bpe_codes.empty()) check_bpe_codes(options_.bpe_codes);
  task_.bpe_codes = options_.bpe_codes.empty() ? "" : fs::absolute(options_.bpe_codes).lexically_normal().string();
  ATTN_CHECK(options_.max_tokens > 0 || options_.max_sentences > 0, "train: pass --max-tokens or --max-sentences");
  ATTN_CHECK(options_.update_freq >= 1, "train: --update-freq must be >= 1, got {}", options_.update_freq);
  ATTN_CHECK(options_.ema_update_freq >= 1, "train: --ema-update-freq must be >= 1, got {}", options_.ema_update_freq);
  ATTN_CHECK(best_metric_ != ValidationMetric::bleu || options_.eval_bleu.enabled,
             "train: --best-checkpoint-metric bleu needs --eval-bleu (BLEU is measured only then)");
  ATTN_CHECK(options_.eval_bleu.detok == "space" || options_.eval_bleu.detok == "moses",
             "train: --eval-bleu-detok is space or moses, got '{}'", options_.eval_bleu.detok);
  device_ = apply_compute_options(options_.compute);
  config_ = nn::transformer_preset(options_.arch);
  nn::apply_overrides(config_, options_.model_overrides);
  set_vocabulary(config_, task_);
  config_.validate();

  manual_seed(options_.seed);
  model_ = std::make_shared<nn::EncoderDecoderModel>(config_);
  model_->to(device_);  // initialised on the host (the same numbers everywhere), trained on the device
  parameters_ = model_->parameters();
  build_optimizer();
  build_scheduler();
  if (options_.ema_decay != 0.0)
    ema_ = std::make_unique<nn::ExponentialMovingAverage>(model_->named_parameters(), options_.ema_decay);
  ATTN_CHECK(!(ema_ && options_.no_save_optimizer_state),
             "train: --no-save-optimizer-state with --ema-decay would lose the trained weights (the weights file holds "
             "the moving average, the optimizer file the weights being trained)");
  check_shard_dictionaries();
  use_train_shard(1);
  if (data_dirs_.size() == 1 && train_data_->source.parts().size() > 1)
    progress_.line(
        fmt::format("training on {} pairs: {}", train_data_->source.size(), train_data_->source.description()));
  // Opened (and checked) once: a missing or damaged validation split stops the run now, not
  // after its first epoch.
  for (const std::string& subset : options_.valid_subsets) valid_data_.emplace(subset, open_split(task_, subset));
  if (parallel_.is_writer()) {
    save_dir_lock_ = std::make_unique<SaveDirLock>(options_.save_dir, [this](const std::string& text) { progress_.line(text); });
    for (const std::string& path : remove_incomplete_saves(options_.save_dir))
      progress_.line(fmt::format("warning: removed {}, left by an interrupted save", path));
  }
  parallel_.rank_zero_first([this] { resume(); });
  parallel_.check_same_state([this] { return state_summary(); }, restored_from_ ? "resumed from " + *restored_from_ : "nothing to resume from");
  if (parallel_.is_writer()) {
    task_record_ = keep_task_beside(task_, options_.save_dir);
    open_log();
  }
}

void Trainer::check_shard_dictionaries() const {
  if (data_dirs_.size() < 2) return;
  const std::map<std::string, std::string> first_checksums = {
      {task_.source_dict_path, file_checksum(task_.source_dict_path)},
      {task_.target_dict_path, file_checksum(task_.target_dict_path)}};
  for (size_t k = 1; k < data_dirs_.size(); ++k) {
    ATTN_CHECK(fs::is_directory(data_dirs_[k]), "train: data dir {} (shard {} of {}) is no folder", data_dirs_[k],
               k + 1, data_dirs_.size());
    for (const auto& [first, checksum] : first_checksums) {
      const std::string own = (fs::path(data_dirs_[k]) / fs::path(first).filename()).string();
      ATTN_CHECK(!fs::exists(own) || file_checksum(own) == checksum,
                 "train: {} differs from {}: every data dir of {} must be binarized with the first one's dictionaries",
                 own, first, options_.data_dir);
    }
  }
}

void Trainer::use_train_shard(int64_t epoch) {
  const auto shard = size_t((epoch - 1) % int64_t(data_dirs_.size()));
  if (loader_ && shard == train_shard_) return;
  loader_.reset();  // it reads the corpora about to be replaced
  TranslationTask shard_task = task_;  // the first dir's dictionaries, this one's files
  shard_task.data_dir = fs::absolute(data_dirs_[shard]).lexically_normal().string();
  train_data_ = std::make_unique<SplitCorpora>(open_split(
      shard_task, options_.train_subset, {.combine = true, .upsample_primary = options_.upsample_primary}));
  loader_ = make_train_loader(*train_data_, options_, config_);
  loader_->restore({epoch, 0});
  train_shard_ = shard;
  if (loader_->num_filtered() > 0)
    progress_.line(fmt::format("warning: training {}", loader_->filtered().describe()));
  ATTN_CHECK(loader_->num_batches() > 0, "train: {} gives no training batch", train_data_->source.description());
}

void Trainer::open_log() {
  log_path_ = (fs::path(options_.save_dir) / "train_log.jsonl").string();
  ATTN_CHECK(!fs::is_directory(log_path_), "train: the training log {} is a folder; move it away", log_path_);
  if (const size_t cut = data::cut_partial_last_line(log_path_); cut > 0)
    progress_.line(fmt::format("warning: removed the last {} bytes of {}, a record an interrupted run left unfinished",
                               cut, log_path_));
  json_log_.open(log_path_, std::ios::app);
  ATTN_CHECK(json_log_.good(), "train: cannot open the training log {}: {}", log_path_, std::strerror(errno));
  if (!options_.tensorboard_logdir.empty()) tensorboard_ = std::make_unique<TensorBoardLog>(options_.tensorboard_logdir);
}

Trainer::~Trainer() = default;

void Trainer::build_optimizer() {
  const nn::NamedTensors params = model_->named_parameters();
  if (options_.optimizer == "adam") {
    optimizer_ = std::make_unique<nn::Adam>(
        params, nn::AdamOptions{options_.adam_beta1, options_.adam_beta2, options_.adam_eps, options_.weight_decay});
  } else if (options_.optimizer == "nag") {
    optimizer_ = std::make_unique<nn::NAG>(params, nn::NAGOptions{options_.momentum, options_.weight_decay});
  } else {
    throw Error(fmt::format("train: unknown --optimizer '{}' (adam, nag)", options_.optimizer));
  }
}

nlohmann::json Trainer::optimizer_options() const {
  if (options_.optimizer == "nag") return {{"momentum", options_.momentum}, {"weight_decay", options_.weight_decay}};
  return {{"adam_betas", {options_.adam_beta1, options_.adam_beta2}},
          {"adam_eps", options_.adam_eps},
          {"weight_decay", options_.weight_decay}};
}

void Trainer::build_scheduler() {
  ATTN_CHECK(!options_.lr.empty(), "train: --lr needs a value");
  const std::string& kind = options_.lr_scheduler;
  // As fairseq refuses it: only fixed and polynomial_decay read a list (one rate per epoch).
  ATTN_CHECK(kind == "fixed" || kind == "polynomial_decay" || options_.lr.size() == 1,
             "train: --lr {} gives {} rates, one per epoch, which only --lr-scheduler fixed or polynomial_decay "
             "reads; {} takes one",
             fmt::join(options_.lr, ","), options_.lr.size(), kind);
  const int64_t warmup_updates =
      options_.warmup_updates.value_or(kind == "inverse_sqrt" ? nn::InverseSqrtOptions{}.warmup_updates : 0);
  if (kind == "inverse_sqrt") {
    scheduler_ = std::make_unique<nn::InverseSqrtScheduler>(
        nn::InverseSqrtOptions{options_.lr.front(), warmup_updates, options_.warmup_init_lr});
  } else if (kind == "cosine") {
    nn::CosineOptions cosine;
    // Old flags: --max-lr peak, --lr floor; current flags: --lr peak, --min-lr floor (§1.8).
    cosine.max_lr = options_.max_lr.value_or(options_.lr.front());
    cosine.min_lr = options_.max_lr ? options_.lr.front() : std::max(options_.min_lr, 0.0);
    // The old flags refused a floor at or above the peak; the current ones lower it (the schedule).
    ATTN_CHECK(!options_.max_lr || cosine.max_lr > cosine.min_lr,
               "train: --max-lr ({}) must exceed --lr ({}), the cosine floor in the old flags", cosine.max_lr,
               cosine.min_lr);
    cosine.warmup_updates = warmup_updates;
    cosine.warmup_init_lr = options_.warmup_init_lr;
    cosine.lr_period_updates = options_.lr_period_updates;
    cosine.t_mult = options_.t_mult;
    cosine.lr_shrink = options_.lr_shrink;
    cosine.max_update = options_.max_update;
    scheduler_ = std::make_unique<nn::CosineScheduler>(cosine);
  } else if (kind == "fixed") {
    scheduler_ = std::make_unique<nn::FixedScheduler>(
        nn::FixedOptions{options_.lr, options_.force_anneal, options_.lr_shrink, warmup_updates});
  } else if (kind == "polynomial_decay") {
    ATTN_CHECK(options_.total_num_update || options_.max_update > 0,
               "train: --lr-scheduler polynomial_decay decays over --total-num-update updates; pass it or --max-update");
    scheduler_ = std::make_unique<nn::PolynomialDecayScheduler>(nn::PolynomialDecayOptions{
        options_.lr, options_.force_anneal, options_.end_learning_rate, options_.power,
        options_.total_num_update.value_or(double(options_.max_update)), warmup_updates});
  } else if (kind == "reduce_lr_on_plateau") {
    scheduler_ = std::make_unique<nn::ReduceLROnPlateauScheduler>(nn::ReduceLROnPlateauOptions{
        options_.lr.front(), options_.lr_shrink, options_.lr_threshold, options_.lr_patience, warmup_updates,
        options_.warmup_init_lr, best_metric_ == ValidationMetric::bleu});
  } else {
    throw Error(fmt::format(
        "train: unknown --lr-scheduler '{}' (inverse_sqrt, cosine, fixed, polynomial_decay, reduce_lr_on_plateau)", kind));
  }
  optimizer_->set_lr(scheduler_->lr());
}

// --- checkpoints ----------------------------------------------------------------------

nlohmann::json Trainer::metadata() const {
  const GeneratorState rng = default_generator().state();
  const data::LoaderPosition position = loader_->position();
  nlohmann::json j = {{"model_config", nn::to_json(config_)},
                      {"task", task_record_},
                      {"optimizer", optimizer_->name()},
                      {"optimizer_options", optimizer_options()},
                      {"arch", options_.arch},
                      {"label_smoothing", options_.label_smoothing},
                      {"criterion", options_.criterion},
                      {"num_updates", num_updates_},
                      {"skipped_updates", skipped_updates_},
                      {"epoch", position.epoch},
                      {"loader", {{"epoch", position.epoch}, {"batch_index", position.batch_index}}},
                      {"rng", {{"seed", rng.seed}, {"offset", rng.offset}}},
                      {"scheduler", scheduler_->state_dict()},
                      {"lr", optimizer_->lr()},
                      {"training_seconds", training_seconds()},
                      {"distributed_world_size", parallel_.size()},
                      {"best_loss", nullptr},
                      {"best_bleu", nullptr},
                      {"validated", validated_},
                      {"early_stopping", early_stopping_.state()},
                      {"epoch_meters", epoch_meters_.state()},
                      {"ema", nullptr}};
  if (best_loss_) j["best_loss"] = *best_loss_;
  if (best_bleu_) j["best_bleu"] = *best_bleu_;
  if (ema_)
    j["ema"] = {{"decay", ema_->decay()},
                {"start_update", options_.ema_start_update},
                {"update_freq", options_.ema_update_freq}};
  return j;
}

void Trainer::save(SaveRequest request) {
  if (!parallel_.is_writer() || options_.no_save) return;
  if (last_validation_.update == request.num_updates && !last_validation_.results.empty())
    request.score = best_checkpoint_metric(last_validation_.results.front());
  CheckpointContent content{model_->state_dict(),
                            options_.no_save_optimizer_state ? NamedTensors{} : optimizer_->state_dict(), metadata()};
  content.metadata["optimizer_state_saved"] = !options_.no_save_optimizer_state;
  if (ema_) {  // the averages in the weights file, the trained weights beside the optimizer's state
    content.model = ema_->averaged_state_dict(content.model);
    for (auto& entry : ema_->trained_state()) content.optimizer.push_back(std::move(entry));
  }
  // The request itself, so that a resume can finish a save that was cut off (resume()).
  content.metadata["save"] = {{"epoch", request.epoch}, {"end_of_epoch", request.end_of_epoch}, {"is_best", request.is_best}};
  if (request.score) content.metadata["save"]["score"] = *request.score;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> names = save_rotating(options_.save_dir, request, options_.checkpoints, content);
  if (!names.empty()) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    info(saved_line(request, names, seconds));
  }
  // checkpoint_best holds these weights now: a later save at this update does not write it again.
  if (request.is_best && last_validation_.update == request.num_updates) last_validation_.is_best = false;
}

// fairseq's line: "saved checkpoint checkpoints/checkpoint3 (epoch 3 @ 900 updates, score 4.102)
// (writing took 0.4 seconds; also as checkpoint_best, checkpoint_last)", the score being the
// --best-checkpoint-metric of these weights' validation, when they were validated.
std::string Trainer::saved_line(const SaveRequest& request, const std::vector<std::string>& names,
                                double seconds) {
  const std::string score = request.score ? fmt::format(", score {:.3f}", *request.score) : "";
  std::vector<std::string> copies;
  for (size_t i = 1; i < names.size(); ++i) copies.push_back(fs::path(names[i]).filename().string());
  return fmt::format("saved checkpoint {} (epoch {} @ {} updates{}) (writing took {:.1f} seconds{})", names.front(),
                     request.epoch, request.num_updates, score, seconds,
                     copies.empty() ? "" : fmt::format("; also as {}", fmt::join(copies, ", ")));
}

// The run's dictionaries must be the ones the checkpoint's embeddings were trained with.
void Trainer::check_same_dictionaries(const nlohmann::json& task, const std::string& base) const {
  for (auto [key, path] : {std::pair{"source_dict", task_.source_dict_path}, std::pair{"target_dict", task_.target_dict_path}}) {
    const std::string saved = task.at(key).at("checksum").get<std::string>(), mine = file_checksum(path);
    ATTN_CHECK(saved == mine, "train: checkpoint {} was trained with another {} than {} ({} vs {})", base,
               key == std::string("source_dict") ? "source dictionary" : "target dictionary", path, saved, mine);
  }
}

nlohmann::json Trainer::restore(const std::string& base, const ResetOptions& reset) {
  const CheckpointContent content = load_checkpoint(base, /*with_optimizer=*/!reset.optimizer);
  const nlohmann::json& meta = content.metadata;
  check_resume_metadata(meta, metadata_path(base), reset);
  try {
    check_same_dictionaries(meta.at("task"), base);
    const std::vector<std::string> differences =
        nn::config_differences(nn::config_from_json(meta.at("model_config")), config_);
    ATTN_CHECK(differences.empty() || reset.any(),
               "train: checkpoint {} was trained with another model configuration (checkpoint vs this run): {}", base,
               fmt::join(differences, "; "));
    if (!differences.empty())
      info(fmt::format("model configuration differs from {} (checkpoint vs this run): {}", base, fmt::join(differences, "; ")));
    try {
      model_->load_state_dict(std::map<std::string, Tensor>(content.model.begin(), content.model.end()));
    } catch (const Error& e) {
      throw Error(fmt::format("train: the weights of {} do not fit this model: {} ({} adds or drops weights by name)",
                              weights_path(base), e.what(), "`attnlab convert`"));
    }
    if (!reset.optimizer) restore_optimizer(content, base, reset.lr_scheduler);
    else if (ema_) ema_->update(/*copy=*/true);  // a new average, from the weights file
    if (!reset.dataloader) {
      default_generator().set_state({meta.at("rng").at("seed").get<uint64_t>(), meta.at("rng").at("offset").get<uint64_t>()});
      const int64_t loader_epoch = meta.at("loader").at("epoch").get<int64_t>();
      use_train_shard(loader_epoch);
      loader_->restore({loader_epoch, meta.at("loader").at("batch_index").get<int64_t>()});
    }
    if (!reset.meters) {
      skipped_updates_ = meta.value("skipped_updates", int64_t(0));
      previous_seconds_ = meta.value("training_seconds", 0.0);
      if (!meta.at("best_loss").is_null()) best_loss_ = meta.at("best_loss").get<double>();
      if (!value_at(meta, "best_bleu").is_null()) best_bleu_ = meta.at("best_bleu").get<double>();
      validated_ = meta.value("validated", true);
      if (meta.contains("early_stopping")) early_stopping_.restore(meta.at("early_stopping"));
      if (const nlohmann::json meters = value_at(meta, "epoch_meters"); meters.is_object())
        epoch_meters_ = IntervalStats::from_state(meters);
    }
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(fmt::format("checkpoint {}: {}", metadata_path(base), e.what()));
  }
  restored_from_ = base;
  return meta;
}

void Trainer::restore_optimizer(const CheckpointContent& content, const std::string& base, bool reset_lr_scheduler) {
  const nlohmann::json& meta = content.metadata;
  if (!meta.value("optimizer_state_saved", true)) {  // --no-save-optimizer-state: all but the moments
    progress_.line(fmt::format("warning: {} was saved with --no-save-optimizer-state: the optimizer's moments "
                               "start afresh at update {} (a resumed run, not the uninterrupted one)",
                               base, meta.at("num_updates").get<int64_t>()));
    restore_schedule(meta, reset_lr_scheduler);
    return;
  }
  ATTN_CHECK(!content.optimizer.empty(),
             "train: checkpoint {} holds weights only (no optimizer state); start from it with --finetune-from-model "
             "or --reset-optimizer",
             base);
  ATTN_CHECK(meta.at("optimizer").get<std::string>() == optimizer_->name(),
             "train: checkpoint {} holds a '{}' optimizer state but this run uses --optimizer {} (or pass --reset-optimizer)",
             base, meta.at("optimizer").get<std::string>(), optimizer_->name());
  const std::map<std::string, Tensor> state(content.optimizer.begin(), content.optimizer.end());
  const bool averaged = nn::ExponentialMovingAverage::holds_trained_state(state);
  ATTN_CHECK(averaged == bool(ema_),
             "train: checkpoint {} was trained {} --ema-decay (its weights file holds {}); resume it {} --ema-decay, "
             "or start from its weights with --reset-optimizer",
             base, averaged ? "with" : "without", averaged ? "the moving average" : "the trained weights",
             averaged ? "with" : "without");
  optimizer_->load_state_dict(state);
  if (ema_) ema_->restore(state);  // θ̄ from the weights file just loaded, θ from the optimizer file
  restore_schedule(meta, reset_lr_scheduler);
}

void Trainer::restore_schedule(const nlohmann::json& meta, bool reset_lr_scheduler) {
  num_updates_ = meta.at("num_updates").get<int64_t>();
  if (reset_lr_scheduler) return;  // begin_epoch() sets the fresh schedule's lr at num_updates_
  scheduler_->load_state_dict(meta.at("scheduler"));
  optimizer_->set_lr(meta.at("lr").get<double>());
}

void Trainer::resume() {
  const bool finetune = !options_.finetune_from_model.empty();
  ATTN_CHECK(!finetune || (options_.restore_file.empty() && !options_.reset.any()),
             "train: --finetune-from-model resets the optimizer, schedule, meters and data position itself; it cannot "
             "be combined with --restore-file or --reset-*");
  if (!options_.restore_file.empty()) {
    std::string base = checkpoint_base(options_.restore_file);
    if (!checkpoint_exists(base) && fs::path(base).parent_path().empty())
      base = (fs::path(options_.save_dir) / base).string();  // fairseq resolves it in the save dir
    restore(base, options_.reset);
  } else {
    resume_from_save_dir();
  }
  if (restored_from_) {
    info(fmt::format("resumed from {} (epoch {}, update {}){}", *restored_from_, epoch(), num_updates_,
                     finetune ? "; --finetune-from-model is ignored once the save dir has a checkpoint" : ""));
  } else if (finetune) {
    restore(checkpoint_base(options_.finetune_from_model), ResetOptions{true, true, true, true});
    info(fmt::format("finetuning from the weights of {} (new optimizer, schedule and data order)", *restored_from_));
  }
}

// The newest checkpoint of the save dir that loads completely; newer ones that do not are
// reported. A save dir whose checkpoints all fail is an error: training from update 0 would
// overwrite them.
void Trainer::resume_from_save_dir() {
  std::vector<std::string> problems;
  nlohmann::json restored;  // the metadata of the checkpoint resumed from
  for (const std::string& base : checkpoints_newest_first(options_.save_dir)) {
    try {
      restored = restore(base, options_.reset);
      break;
    } catch (const CheckpointError& e) {
      problems.push_back(e.what());
    }
  }
  if (!restored_from_) {
    ATTN_CHECK(problems.empty(),
               "train: save dir {} holds checkpoints but none can be resumed from: {}. Training from scratch would "
               "overwrite them: move them away or use another --save-dir, or start from one of them on purpose "
               "with --restore-file NAME and --reset-optimizer / --reset-* (or --finetune-from-model)",
               options_.save_dir, fmt::join(problems, "; "));
    return;
  }
  for (const std::string& problem : problems) progress_.line(fmt::format("warning: not resuming from a newer checkpoint: {}", problem));
  const nlohmann::json save = restored.value("save", nlohmann::json());
  if (save.is_null() || options_.reset.any() || !parallel_.is_writer()) return;
  SaveRequest request{.epoch = save.at("epoch").get<int64_t>(), .num_updates = num_updates_,
                      .end_of_epoch = save.at("end_of_epoch").get<bool>(), .is_best = save.at("is_best").get<bool>()};
  if (save.contains("score")) request.score = save.at("score").get<double>();
  for (const std::string& name : finish_interrupted_save(options_.save_dir, request, options_.checkpoints, *restored_from_))
    progress_.line(fmt::format("warning: wrote {}, which the interrupted save of {} did not", name, *restored_from_));
}

// --- one update -----------------------------------------------------------------------

StepResult Trainer::train_step(const std::vector<data::Batch>& micro_batches) {
  std::vector<int64_t> slots(micro_batches.size());
  std::iota(slots.begin(), slots.end(), int64_t(0));
  return train_step(micro_batches, slots, int64_t(slots.size()));
}

StepResult Trainer::train_step(const std::vector<data::Batch>& micro_batches, const std::vector<int64_t>& slots,
                               int64_t slots_total) {
  ATTN_CHECK(slots_total > 0, "train_step: no batch");
  ATTN_CHECK(slots.size() == micro_batches.size(), "train_step: {} slots for {} micro-batches", slots.size(),
             micro_batches.size());
  model_->train();
  optimizer_->zero_grad();
  StepResult result;
  result.lr = optimizer_->lr();
  // Each micro-batch's dropout is keyed by its slot, so that it does not depend on which
  // rank runs it (data_parallel.hpp).
  const GeneratorState start = default_generator().state();
  auto slot_state = [&start](int64_t slot) {
    return GeneratorState{start.seed, start.offset + uint64_t(slot) * DataParallel::kMicroBatchCounters};
  };
  for (size_t i = 0; i < micro_batches.size(); ++i) {
    const data::Batch& batch = micro_batches[i];
    default_generator().set_state(slot_state(slots[i]));
    nn::CriterionOutput out;
    {
      profiler::ProfileScope scope("trainer: forward + loss");
      const BatchTensors tensors = to_tensors(batch, device_);
      out = criterion_(model_->forward(tensors.src_tokens, tensors.prev_output_tokens), tensors.target);
    }
    {
      profiler::ProfileScope scope("trainer: backward");
      // The last backward of the update may start summing gradients over the ranks as they
      // become final; the earlier ones only accumulate (fairseq's no_sync).
      const bool last = i + 1 == micro_batches.size();
      backward(out.loss, Tensor(), last ? parallel_.gradient_ready_hook(parameters_) : GradReadyFn());
    }
    result.loss_sum += out.loss.item();
    result.nll_sum += out.nll_sum;
    result.ntokens += out.ntokens;
    result.nsentences += batch.batch_size;
  }
  default_generator().set_state(slot_state(slots_total));
  std::vector<double> counts = {result.loss_sum, result.nll_sum, double(result.ntokens), double(result.nsentences)};
  parallel_.sum_over_ranks(parameters_, counts);
  result.loss_sum = counts[0];
  result.nll_sum = counts[1];
  result.ntokens = int64_t(counts[2]);
  result.nsentences = int64_t(counts[3]);
  ATTN_CHECK(result.ntokens > 0, "train_step: the batches hold no target token");
  profiler::ProfileScope scope("trainer: normalise, clip, optimizer step");
  const nn::GradScale grad_scale = nn::scaled_grad_norm(parameters_, 1.0 / double(result.ntokens), options_.clip_norm);
  result.gnorm = grad_scale.norm;
  if (!std::isfinite(result.loss_sum) || !std::isfinite(result.gnorm)) {
    const std::string what = fmt::format("update {} (epoch {}): the {} is not finite (loss {}, gradient norm {})",
                                         num_updates_ + 1, epoch(),
                                         std::isfinite(result.loss_sum) ? "gradient norm" : "loss", result.loss_sum,
                                         result.gnorm);
    optimizer_->zero_grad();
    if (!options_.skip_invalid_updates)
      throw Error(what + "; training stopped before the update (the last checkpoint is intact; "
                         "--skip-invalid-updates skips such updates)");
    progress_.line("warning: skipping " + what);
    ++skipped_updates_;
    return result;
  }
  optimizer_->step(grad_scale.factor);
  optimizer_->zero_grad();
  ++num_updates_;
  if (ema_ && num_updates_ % options_.ema_update_freq == 0)
    ema_->update(/*copy=*/num_updates_ < options_.ema_start_update);
  validated_ = false;
  optimizer_->set_lr(scheduler_->step_update(num_updates_));
  result.applied = true;
  return result;
}

// --- validation -----------------------------------------------------------------------

ValidationResult Trainer::validate(const std::string& split) {
  std::optional<nn::AveragedWeightsScope> averaged;  // with --ema-decay, θ̄ is what is measured
  if (ema_) averaged.emplace(*ema_);
  const auto opened = valid_data_.find(split);
  std::optional<SplitCorpora> other;  // a split that is no --valid-subset
  const SplitCorpora& corpora = opened != valid_data_.end() ? opened->second : other.emplace(open_split(task_, split));
  // --max-tokens-valid and --batch-size-valid, as training's when not given (fairseq's defaults).
  const int64_t max_tokens = options_.valid_max_tokens > 0 ? options_.valid_max_tokens : options_.max_tokens;
  const int64_t max_sentences = options_.valid_max_sentences > 0 ? options_.valid_max_sentences : options_.max_sentences;
  ValidationResult result = evaluate_loss(*model_, corpora, criterion_, max_tokens, max_sentences,
                                          &parallel_.world());  // each rank its share of the batches
  // The same pairs each time: said at the split's first validation.
  if (result.skipped.total() > 0 && splits_with_skips_told_.insert(split).second)
    progress_.line(fmt::format("warning: valid on '{}' subset | {}", split, result.skipped.describe()));
  if (options_.eval_bleu.enabled) {
    const BleuValidation bleu = evaluate_bleu(*model_, corpora, task_.target_dict, options_.eval_bleu,
                                              task_.target_lang, max_tokens, max_sentences, &parallel_.world());
    result.bleu = bleu.score.score;
    if (options_.eval_bleu.print_samples) {
      info("example hypothesis: " + bleu.sample_hypothesis);
      info("example reference: " + bleu.sample_reference);
    }
  }
  model_->train();
  return result;
}

const std::vector<ValidationResult>& Trainer::validate_these_weights() {
  if (last_validation_.update != num_updates_) {
    std::vector<ValidationResult> results;
    for (const std::string& subset : options_.valid_subsets) results.push_back(validate(subset));
    last_validation_ = UpdateValidation{.update = num_updates_, .results = std::move(results)};
  }
  return last_validation_.results;
}

void Trainer::validate_at_interval() {
  const std::vector<ValidationResult>& results = validate_these_weights();
  if (last_validation_.told) return;
  last_validation_.told = true;
  const ValidationResult& valid = results.front();
  early_stopping_.observe(num_updates_, best_checkpoint_metric(valid));
  info(validation_line(0, valid, std::nullopt));
  log_json(validation_record(valid, options_.valid_subsets.front(), epoch()));
  log_other_subsets(results, std::nullopt);
}

std::string Trainer::validation_line(size_t subset, const ValidationResult& valid,
                                     std::optional<int64_t> ended_epoch) const {
  const std::string& name = options_.valid_subsets.at(subset);
  if (ended_epoch)
    return fmt::format("epoch {:03d} | valid on '{}' subset | {} | num_updates {}", *ended_epoch, name,
                       validation_text(valid), num_updates_);
  if (name == "valid") return fmt::format("valid at update {} | {}", num_updates_, validation_text(valid));
  return fmt::format("valid on '{}' subset at update {} | {}", name, num_updates_, validation_text(valid));
}

void Trainer::log_other_subsets(const std::vector<ValidationResult>& valid, std::optional<int64_t> ended_epoch) {
  for (size_t i = 1; i < valid.size(); ++i) {
    info(validation_line(i, valid[i], ended_epoch));
    log_json(validation_record(valid[i], options_.valid_subsets[i], ended_epoch.value_or(epoch())));
  }
}

double Trainer::best_checkpoint_metric(const ValidationResult& valid) const {
  return best_metric_ == ValidationMetric::bleu ? valid.bleu.value() : valid.loss;
}

// "loss 3.912 | nll_loss 3.101 | ppl 8.58 | bleu 12.34" and the same as fields of a log record.
std::string Trainer::validation_text(const ValidationResult& valid) {
  std::string text = fmt::format("loss {:.3f} | nll_loss {:.3f} | ppl {:.2f}", valid.loss, valid.nll_loss, valid.ppl);
  if (valid.bleu) text += fmt::format(" | bleu {:.2f}", *valid.bleu);
  return text;
}

nlohmann::json Trainer::validation_record(const ValidationResult& valid, const std::string& subset,
                                          int64_t epoch) const {
  nlohmann::json record = {{"type", "valid"},   {"subset", subset},         {"epoch", epoch}, {"update", num_updates_},
                           {"loss", valid.loss}, {"nll_loss", valid.nll_loss}, {"ppl", valid.ppl},
                           {"elapsed", training_seconds()}};
  if (valid.bleu) record["bleu"] = *valid.bleu;
  return record;
}

// --- the loop -------------------------------------------------------------------------

double Trainer::training_seconds() const {
  return previous_seconds_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count();
}

double Trainer::progress_fraction() const {
  double fraction = 0.0;
  if (options_.max_update > 0) fraction = std::max(fraction, double(num_updates_) / double(options_.max_update));
  if (options_.max_time_minutes > 0)
    fraction = std::max(fraction, training_seconds() / (60.0 * options_.max_time_minutes));
  if (options_.max_epoch > 0) {
    const data::LoaderPosition p = loader_->position();
    const double epochs = double(p.epoch - 1) + double(p.batch_index) / double(loader_->num_batches());
    fraction = std::max(fraction, epochs / double(options_.max_epoch));
  }
  return fraction;
}

std::optional<std::string> Trainer::stop_reason(bool end_of_epoch) const {
  if (options_.max_update > 0 && num_updates_ >= options_.max_update)
    return fmt::format("reached --max-update {}", options_.max_update);
  if (options_.max_time_minutes > 0 && training_seconds() >= 60.0 * options_.max_time_minutes)
    return options_.time_limit_in_hours ? fmt::format("reached --stop-time-hours {}", options_.max_time_minutes / 60.0)
                                        : fmt::format("reached --max-time-minutes {}", options_.max_time_minutes);
  if (end_of_epoch && options_.max_epoch > 0 && loader_->position().epoch > options_.max_epoch)
    return fmt::format("reached --max-epoch {}", options_.max_epoch);
  if (end_of_epoch)
    if (std::optional<std::string> low = lr_stop_reason()) return low;
  return early_stopping_.stop_reason();
}

std::optional<std::string> Trainer::lr_stop_reason() const {
  // fairseq stops at lr <= the threshold: --min-lr in the old flags (where a threshold of 0, the
  // default, means none), --stop-min-lr in the current ones (-1 by default: never).
  if (options_.max_lr && options_.min_lr > 0 && optimizer_->lr() <= options_.min_lr)
    return fmt::format("lr {} reached --min-lr {}", optimizer_->lr(), options_.min_lr);
  if (!options_.max_lr && optimizer_->lr() <= options_.stop_min_lr)
    return fmt::format("lr {} reached --stop-min-lr {}", optimizer_->lr(), options_.stop_min_lr);
  return std::nullopt;
}

void Trainer::begin_epoch() {
  if (data_dirs_.size() > 1) {
    use_train_shard(epoch());
    info(fmt::format("epoch {:03d} | training on {} pairs: {}", epoch(), train_data_->source.size(),
                     train_data_->source.description()));
  }
  scheduler_->step_begin_epoch(loader_->position().epoch);
  optimizer_->set_lr(scheduler_->step_update(num_updates_));
}

std::string Trainer::state_summary() const {
  const GeneratorState rng = default_generator().state();
  const data::LoaderPosition position = loader_->position();
  return fmt::format("update {}, epoch {} batch {}, generator ({}, {}), weights checksum {:016x}", num_updates_,
                     position.epoch, position.batch_index, rng.seed, rng.offset, values_checksum(parameters_));
}

void Trainer::info(const std::string& text) {
  if (options_.progress != ProgressMode::kQuiet) progress_.line(text);
}

void Trainer::log_json(const nlohmann::json& record) {
  if (!parallel_.is_writer()) return;
  json_log_ << record.dump() << "\n";
  json_log_.flush();
  // A full disk, or a log that is a link to /dev/full: the run's metrics would be lost unseen.
  ATTN_CHECK(json_log_.good(), "train: cannot write the training log {}: {}", log_path_, std::strerror(errno));
  if (tensorboard_) tensorboard_->write(record);
}

std::optional<SaveRequest> Trainer::after_update(const StepResult& step, IntervalStats& interval,
                                                TrainingSummary& summary, std::optional<int64_t> ending_epoch) {
  summary.target_tokens += step.ntokens;
  if (!step.applied) return std::nullopt;
  interval.add(step, options_.clip_norm);
  epoch_meters_.add(step, options_.clip_norm);
  const nlohmann::json record = meter_record("train", epoch(), interval);
  const double fraction = progress_fraction();
  const std::string status = fmt::format("epoch {:03d} | update {} | {} | elapsed {} | ETA {}", epoch(), num_updates_,
                                         meter_text(record), format_duration(training_seconds()),
                                         format_eta(training_seconds(), fraction));
  progress_.update(fraction, status);
  if (options_.log_interval > 0 && num_updates_ % options_.log_interval == 0) {
    if (!progress_.live()) info(status);
    log_json(record);
    interval = IntervalStats{};
  }
  const int64_t interval_updates = options_.checkpoints.save_interval_updates;
  const bool late_enough = num_updates_ >= options_.validate_after_updates;
  const bool save_now = interval_updates > 0 && num_updates_ % interval_updates == 0 && late_enough;
  const bool validate_now = options_.validate_interval_updates > 0 &&
                            num_updates_ % options_.validate_interval_updates == 0 && late_enough;
  std::optional<SaveRequest> save_due;
  if (save_now) save_due = SaveRequest{.epoch = epoch(), .num_updates = num_updates_, .end_of_epoch = false};
  if (!options_.valid_subsets.empty()) {
    // fairseq validates at every mid-epoch save too, and saves checkpoint_best there on a new best.
    if (save_now && options_.validate_at_update_saves) validate_with_best(epoch(), save_due->is_best);
    else if (validate_now && !end_validates_this_update(ending_epoch)) validate_at_interval();
  }
  return save_due;
}

bool Trainer::end_validates_this_update(std::optional<int64_t> ending_epoch) const {
  // A --max-time-minutes stop is not known here (the ranks agree on it after the update): its
  // validation is the interval's, logged without the best.
  const bool run_ends = options_.max_update > 0 && num_updates_ >= options_.max_update;
  return run_ends || (ending_epoch && *ending_epoch % options_.validate_interval == 0);
}

void Trainer::end_of_epoch_or_stop(bool end_of_epoch, bool stopping, TrainingSummary& summary) {
  // After the loader reported the end of epoch E its position is already (E + 1, 0).
  const int64_t finished_epoch = end_of_epoch ? loader_->position().epoch - 1 : epoch();
  validated_ = true;
  bool is_best = false;  // never without validation: no checkpoint_best, as in fairseq
  const bool validate_now = (stopping || finished_epoch % options_.validate_interval == 0) &&
                            num_updates_ >= options_.validate_after_updates;
  if (!options_.valid_subsets.empty() && validate_now) {
    // Validated already at this update (a save's or an interval's validation): the same result,
    // not told twice.
    const ValidationResult valid = validate_with_best(finished_epoch, is_best);
    summary.last_valid = valid;
    // A validation that stops the run early is saved whatever the interval (fairseq's order).
    stopping = stopping || early_stopping_.stop_reason().has_value();
    // The schedule's end-of-epoch step (reduce_lr_on_plateau reads the metric) comes before the
    // save, so that a run resumed from this checkpoint goes on as the uninterrupted one.
    if (end_of_epoch) scheduler_->step(finished_epoch, best_checkpoint_metric(valid));
  }
  if (end_of_epoch) optimizer_->set_lr(scheduler_->step_update(num_updates_));
  const IntervalStats meters = epoch_meters_;
  if (end_of_epoch) epoch_meters_ = IntervalStats{};  // the next epoch's, as the save below records them
  if (stopping || finished_epoch % options_.save_interval == 0)
    save({.epoch = finished_epoch, .num_updates = num_updates_, .end_of_epoch = end_of_epoch, .is_best = is_best});
  log_epoch_meters(meters, finished_epoch);
}

void Trainer::log_epoch_meters(const IntervalStats& meters, int64_t finished_epoch) {
  if (meters.updates == 0) return;
  const nlohmann::json record = meter_record("train_epoch", finished_epoch, meters);
  info(fmt::format("end of epoch {} (average epoch stats below)", finished_epoch));
  info(fmt::format("epoch {:03d} | {} | num_updates {} | elapsed {}", finished_epoch, meter_text(record), num_updates_,
                   format_duration(training_seconds())));
  log_json(record);
}

ValidationResult Trainer::validate_with_best(int64_t finished_epoch, bool& is_best) {
  const std::vector<ValidationResult>& results = validate_these_weights();
  const ValidationResult& valid = results.front();
  if (last_validation_.is_best.has_value()) {  // ranked already at this update
    is_best = *last_validation_.is_best;
    return valid;
  }
  early_stopping_.observe(num_updates_, best_checkpoint_metric(valid));
  const bool better_loss = improves(ValidationMetric::loss, valid.loss, best_loss_);
  if (better_loss) best_loss_ = valid.loss;
  const bool better_bleu = valid.bleu && improves(ValidationMetric::bleu, *valid.bleu, best_bleu_);
  if (better_bleu) best_bleu_ = valid.bleu;
  is_best = best_metric_ == ValidationMetric::bleu ? better_bleu : better_loss;
  last_validation_.is_best = is_best;
  if (last_validation_.told) return valid;  // an interval validation at this update logged it
  last_validation_.told = true;
  nlohmann::json record = validation_record(valid, options_.valid_subsets.front(), finished_epoch);
  record["best_loss"] = *best_loss_;
  std::string best_text = fmt::format("best_loss {:.3f}", *best_loss_);
  if (best_bleu_) {
    record["best_bleu"] = *best_bleu_;
    best_text += fmt::format(" | best_bleu {:.2f}", *best_bleu_);
  }
  info(validation_line(0, valid, finished_epoch) + " | " + best_text);
  log_json(record);
  log_other_subsets(results, finished_epoch);
  return valid;
}

TrainingSummary Trainer::train() {
  run_start_ = std::chrono::steady_clock::now();
  TrainingSummary summary;
  std::optional<std::string> stop = parallel_.agree(stop_reason(/*end_of_epoch=*/true));
  // A run killed after its last update but before the validation and checkpoints of its end.
  if (stop && !validated_) end_of_epoch_or_stop(/*end_of_epoch=*/false, /*stopping=*/true, summary);
  IntervalStats interval;
  while (!stop) {
    begin_epoch();
    bool end_of_epoch = false;
    while (!end_of_epoch && !stop) {
      // The update's batches of all ranks; this rank keeps the slots it owns (data_parallel.hpp).
      std::vector<data::Batch> group;
      std::vector<int64_t> slots;
      std::optional<SaveRequest> save_due;
      int64_t slots_total = 0;
      for (; slots_total < options_.update_freq * parallel_.size(); ++slots_total) {
        std::optional<data::Batch> batch = loader_->next();
        if (!batch) {
          end_of_epoch = true;
          break;
        }
        if (!parallel_.owns(slots_total)) continue;
        group.push_back(std::move(*batch));
        slots.push_back(slots_total);
      }
      if (slots_total > 0) {
        const auto start = std::chrono::steady_clock::now();
        const StepResult step = train_step(group, slots, slots_total);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        interval.seconds += seconds;
        epoch_meters_.seconds += seconds;
        summary.seconds += seconds;
        // The epoch this update ends, if it is its last.
        std::optional<int64_t> ending_epoch;
        if (end_of_epoch) ending_epoch = epoch() - 1;  // the loader is in the next epoch already
        else if (loader_->epoch_exhausted()) ending_epoch = epoch();
        save_due = after_update(step, interval, summary, ending_epoch);
      }
      stop = parallel_.agree(stop_reason(end_of_epoch));
      // The run's end or the epoch's saves these weights (fairseq's one save per update).
      if (save_due && !stop && !end_of_epoch) save(*save_due);
    }
    end_of_epoch_or_stop(end_of_epoch, stop.has_value(), summary);
    // The epoch's validation may stop it, and so may the lr the schedule's end-of-epoch step set.
    if (!stop) stop = parallel_.agree(lr_stop_reason());
    if (!stop) stop = parallel_.agree(early_stopping_.stop_reason());
  }
  progress_.finish();
  summary.stop_reason = *stop;
  summary.num_updates = num_updates_;
  summary.epoch = epoch();
  summary.skipped_updates = skipped_updates_;
  summary.best_valid_loss = best_loss_;
  summary.tokens_per_second = summary.seconds > 0 ? double(summary.target_tokens) / summary.seconds : 0.0;
  const std::string speed = summary.seconds > 0 ? fmt::format("{:.0f} target tokens/s", summary.tokens_per_second)
                                                : std::string("none of them in this run");
  info(fmt::format("done training ({}): {} updates, {}", summary.stop_reason, num_updates_, speed));
  const PeakMemory memory = peak_memory(device_);
  log_json({{"type", "done"}, {"reason", summary.stop_reason}, {"update", num_updates_},
            {"tokens_per_second", summary.tokens_per_second}, {"elapsed", training_seconds()},
            {"peak_tensor_mib", memory.tensor_mib}, {"peak_resident_mib", memory.resident_mib}});
  return summary;
}

nlohmann::json last_training_summary(const std::string& save_dir) {
  std::ifstream log((fs::path(save_dir) / "train_log.jsonl").string());
  nlohmann::json summary = nlohmann::json::object();
  for (std::string line; std::getline(log, line);) {
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.value("type", "") == "done" && record.value("tokens_per_second", 0.0) > 0)
      summary = std::move(record);
  }
  return summary;
}

}  // namespace attn::app
