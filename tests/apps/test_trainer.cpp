// Tests of apps/trainer on a tiny synthetic corpus: interrupted + resumed training is
// bit-identical to an uninterrupted run (also when the newest checkpoint is torn and an
// older one is used); NaN/inf stops with the update named or is skipped on request;
// update-freq 2 over two half batches ≈ update-freq 1 over the whole batch (§1.9);
// the run learns (the loss falls) and writes its logs.
#include <catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "synthetic_corpus.hpp"

using namespace attn;
using namespace attn::app;
using testing::bitwise_equal;
namespace fs = std::filesystem;

namespace {

double max_abs_difference(nn::EncoderDecoderModel& a, nn::EncoderDecoderModel& b) {
  const nn::NamedTensors sa = a.named_parameters(), sb = b.named_parameters();
  double worst = 0.0;
  for (size_t i = 0; i < sa.size(); ++i) {
    const std::vector<double> x = sa[i].second.to_vector(), y = sb[i].second.to_vector();
    for (size_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::abs(x[k] - y[k]));
  }
  return worst;
}

// A batch of the given (source, target) rows, laid out as data/batching.hpp does
// (sources left-padded, targets right-padded, all ending in </s>).
data::Batch make_batch(const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>& rows) {
  data::Batch b;
  b.batch_size = int64_t(rows.size());
  for (const auto& [s, t] : rows) {
    b.source_len = std::max(b.source_len, int64_t(s.size()) + 1);
    b.target_len = std::max(b.target_len, int64_t(t.size()) + 1);
  }
  for (const auto& [s, t] : rows) {
    std::vector<int64_t> src(size_t(b.source_len) - s.size() - 1, data::Dictionary::kPad);
    src.insert(src.end(), s.begin(), s.end());
    src.push_back(data::Dictionary::kEos);
    b.source_tokens.insert(b.source_tokens.end(), src.begin(), src.end());
    b.source_lengths.push_back(int64_t(s.size()) + 1);
    std::vector<int64_t> tgt(t), prev{data::Dictionary::kEos};
    tgt.push_back(data::Dictionary::kEos);
    prev.insert(prev.end(), t.begin(), t.end());
    tgt.resize(size_t(b.target_len), data::Dictionary::kPad);
    prev.resize(size_t(b.target_len), data::Dictionary::kPad);
    b.target.insert(b.target.end(), tgt.begin(), tgt.end());
    b.prev_output_tokens.insert(b.prev_output_tokens.end(), prev.begin(), prev.end());
    b.target_lengths.push_back(int64_t(t.size()) + 1);
    b.num_target_tokens += int64_t(t.size()) + 1;
  }
  for (size_t i = 0; i < rows.size(); ++i) b.ids.push_back(int64_t(i));
  return b;
}

const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> kRows = {
    {{4, 5, 6, 7}, {7, 6, 5, 4}}, {{8, 9}, {9, 8}}, {{10, 11, 12}, {12, 11, 10}}, {{13, 14, 15, 16, 17}, {17, 16, 15, 14, 13}}};

Tensor parameter(nn::EncoderDecoderModel& model, const std::string& name) {
  for (const auto& [n, p] : model.named_parameters())
    if (n == name) return p;
  FAIL("no parameter " << name);
  return {};
}

// Each epoch's last train_epoch record in the training log of `save_dir`, without its timings:
// a run stopped within an epoch logs that epoch's statistics so far, and its resumption the
// whole epoch's.
std::map<int64_t, nlohmann::json> epoch_statistics(const std::string& save_dir) {
  std::map<int64_t, nlohmann::json> by_epoch;
  std::ifstream log(save_dir + "/train_log.jsonl");
  for (std::string line; std::getline(log, line);) {
    nlohmann::json record = nlohmann::json::parse(line);
    if (record["type"] != "train_epoch") continue;
    for (const char* timing : {"tokens_per_second", "ups", "train_wall", "elapsed"}) record.erase(timing);
    by_epoch[record["epoch"].get<int64_t>()] = record;
  }
  return by_epoch;
}

}  // namespace

TEST_CASE("trainer: an interrupted and resumed run is bit-identical to an uninterrupted one", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_resume");
  testing::write_reversal_corpus(root);
  // 12 updates span 3 epochs, so the resumed half crosses an epoch boundary.
  TrainerOptions straight = testing::tiny_trainer_options(root, root + "/straight");
  straight.max_update = 12;
  straight.checkpoints.save_interval_updates = 5;
  Trainer uninterrupted(straight);
  const TrainingSummary full = uninterrupted.train();
  REQUIRE(full.num_updates == 12);
  REQUIRE(full.epoch == 3);

  TrainerOptions first_half = straight;
  first_half.save_dir = root + "/resumed";
  first_half.max_update = 7;
  {
    Trainer interrupted(first_half);
    CHECK(interrupted.train().num_updates == 7);
    CHECK_FALSE(bitwise_equal(interrupted.model(), uninterrupted.model()));
  }
  TrainerOptions second_half = first_half;
  second_half.max_update = 12;

  SECTION("resume from checkpoint_last") {
    Trainer resumed(second_half);
    REQUIRE(resumed.restored_from() == root + "/resumed/checkpoint_last");
    CHECK(resumed.num_updates() == 7);
    resumed.train();
    CHECK(resumed.num_updates() == 12);
    CHECK(bitwise_equal(resumed.model(), uninterrupted.model()));
    // fairseq's epoch statistics: epoch 2's sums came through the checkpoint of update 7.
    REQUIRE(epoch_statistics(root + "/straight").size() == 3);
    CHECK(epoch_statistics(root + "/resumed") == epoch_statistics(root + "/straight"));
  }
  SECTION("torn checkpoints are rejected and the newest intact one used") {
    // checkpoint_last and checkpoint_best hold update 7; checkpoint_<E>_5 update 5.
    for (const char* name : {"checkpoint_last.safetensors", "checkpoint_best.optimizer.safetensors"})
      fs::resize_file(root + "/resumed/" + name, fs::file_size(root + "/resumed/" + name) / 2);
    Trainer resumed(second_half);
    REQUIRE(resumed.restored_from().has_value());
    CHECK(fs::path(*resumed.restored_from()).filename().string().ends_with("_5"));
    CHECK(resumed.num_updates() == 5);
    resumed.train();
    CHECK(bitwise_equal(resumed.model(), uninterrupted.model()));
    CHECK(epoch_statistics(root + "/resumed") == epoch_statistics(root + "/straight"));
  }
  SECTION("an explicit --restore-file that is torn is an error") {
    fs::resize_file(root + "/resumed/checkpoint_last.optimizer.safetensors", 100);
    second_half.restore_file = "checkpoint_last";
    CHECK_THROWS_WITH(Trainer(second_half), Catch::Contains("checkpoint_last.optimizer.safetensors"));
  }
}

TEST_CASE("trainer: --no-save-optimizer-state saves no moments; a resume goes on with fresh ones, on schedule",
          "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_no_optimizer_state");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/resumed");
  options.no_save_optimizer_state = true;
  TrainerOptions straight = options;
  straight.save_dir = root + "/straight";
  straight.max_update = 6;
  Trainer uninterrupted(straight);
  uninterrupted.train();
  options.max_update = 4;
  Trainer(options).train();
  CHECK(fs::exists(root + "/resumed/checkpoint_last.safetensors"));
  CHECK_FALSE(fs::exists(root + "/resumed/checkpoint_last.optimizer.safetensors"));
  options.max_update = 6;
  Trainer resumed(options);
  CHECK(resumed.restored_from() == root + "/resumed/checkpoint_last");
  CHECK(resumed.num_updates() == 4);
  resumed.train();
  CHECK(resumed.num_updates() == 6);
  CHECK_FALSE(bitwise_equal(resumed.model(), uninterrupted.model()));  // Adam's moments started afresh at 4
  CHECK(load_checkpoint_metadata(root + "/resumed/checkpoint_last").at("lr") ==
        load_checkpoint_metadata(root + "/straight/checkpoint_last").at("lr"));  // the schedule went on
  options.ema_decay = 0.99;
  CHECK_THROWS_WITH(Trainer(options), Catch::Contains("--no-save-optimizer-state with --ema-decay"));
}

TEST_CASE("trainer: --finetune-from-model starts from weights only; --reset-* drop parts of a checkpoint", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_finetune");
  testing::write_reversal_corpus(root);
  TrainerOptions teacher_options = testing::tiny_trainer_options(root, root + "/teacher");
  teacher_options.max_update = 6;  // 4 updates an epoch: stops in epoch 2
  Trainer teacher(teacher_options);
  teacher.train();
  REQUIRE(teacher.epoch() == 2);
  const std::string teacher_last = root + "/teacher/checkpoint_last";

  TrainerOptions finetune = testing::tiny_trainer_options(root, root + "/finetuned");
  finetune.finetune_from_model = teacher_last;
  finetune.lr = {1e-3};

  SECTION("the teacher's weights, everything else fresh; once saved, the run resumes from its own save dir") {
    finetune.max_update = 3;
    {
      Trainer student(finetune);
      CHECK(student.num_updates() == 0);
      CHECK(student.epoch() == 1);
      CHECK(bitwise_equal(student.model(), teacher.model()));
      CHECK(student.train().num_updates == 3);
    }
    finetune.max_update = 5;
    Trainer resumed(finetune);
    CHECK(resumed.restored_from() == root + "/finetuned/checkpoint_last");
    CHECK(resumed.num_updates() == 3);
  }
  SECTION("a weights-only checkpoint (average, convert) finetunes, but an exact resume from it is refused") {
    average_checkpoints_into({teacher_last}, root + "/averaged");
    finetune.finetune_from_model = root + "/averaged";
    CHECK(Trainer(finetune).num_updates() == 0);
    TrainerOptions resume = teacher_options;
    resume.save_dir = root + "/elsewhere";
    resume.restore_file = root + "/averaged";
    CHECK_THROWS_WITH(Trainer(resume), Catch::Contains("weights only") && Catch::Contains("--finetune-from-model"));
  }
  SECTION("weights load strictly: a mixer with weights of its own needs `attnlab convert`") {
    finetune.model_overrides.push_back("decoder_self_mixer=kernel:t2r+additive");
    CHECK_THROWS_WITH(Trainer(finetune), Catch::Contains("fc3") && Catch::Contains("attnlab convert"));
  }
  SECTION("a mixer without weights of its own (ELU) takes the softmax weights as they are") {
    finetune.model_overrides.push_back("decoder_self_mixer=kernel:elu+additive");
    Trainer student(finetune);
    CHECK(bitwise_equal(student.model(), teacher.model()));
  }
  SECTION("--finetune-from-model does not combine with --restore-file or --reset-*") {
    finetune.reset.meters = true;
    CHECK_THROWS_WITH(Trainer(finetune), Catch::Contains("cannot be combined"));
  }
  TrainerOptions restart = teacher_options;
  restart.restore_file = teacher_last;
  restart.save_dir = root + "/restart";
  SECTION("--reset-optimizer: another optimizer, the update count from 0, the data position kept") {
    restart.optimizer = "nag";
    CHECK_THROWS_WITH(Trainer(restart), Catch::Contains("--reset-optimizer"));
    restart.reset.optimizer = true;
    Trainer restarted(restart);
    CHECK(restarted.num_updates() == 0);
    CHECK(restarted.epoch() == 2);
  }
  SECTION("--reset-dataloader: epoch 1 again, the optimizer and update count kept") {
    restart.reset.dataloader = true;
    Trainer restarted(restart);
    CHECK(restarted.num_updates() == 6);
    CHECK(restarted.epoch() == 1);
  }
  SECTION("--reset-lr-scheduler: the fresh schedule's lr at the restored update count") {
    restart.reset.lr_scheduler = true;
    restart.lr = {1e-3};  // the saved schedule would continue the teacher's 3e-3 peak
    restart.max_update = 7;
    restart.log_interval = 1;
    Trainer restarted(restart);
    restarted.train();
    std::ifstream log(root + "/restart/train_log.jsonl");
    std::string line, last;
    while (std::getline(log, line))
      if (line.find("\"lr\"") != std::string::npos) last = line;
    const double lr = nlohmann::json::parse(last).at("lr").get<double>();
    CHECK(lr == Approx(1e-3 * std::sqrt(4.0 / 6.0)));  // update 7 uses inverse_sqrt's lr after update 6
  }
}

TEST_CASE("trainer: a non-finite loss stops training or is skipped, never stepped on", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_nan");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/ck");
  options.model_overrides.push_back("dropout=0");
  options.warmup_init_lr = 1e-3;  // the first update moves the weights
  Trainer trainer(options);
  const data::Batch clean = make_batch(kRows), poisoned = make_batch({{{4, 19, 5}, {5, 19, 4}}});
  Tensor embedding = parameter(trainer.model(), "encoder.embed_tokens.weight");
  const std::vector<double> row = embedding.select(0, 19).to_vector();
  embedding.select(0, 19).fill_(std::numeric_limits<double>::quiet_NaN());

  SECTION("default: stop with an error naming the update") {
    REQUIRE(trainer.train_step({clean}).applied);
    CHECK_THROWS_WITH(trainer.train_step({poisoned}), Catch::Contains("update 2") && Catch::Contains("not finite"));
    CHECK(trainer.num_updates() == 1);
  }
  SECTION("--skip-invalid-updates: the update is dropped, nothing changes") {
    options.skip_invalid_updates = true;
    options.save_dir = root + "/skip";
    Trainer skipping(options);
    Tensor e = parameter(skipping.model(), "encoder.embed_tokens.weight");
    e.select(0, 19).fill_(std::numeric_limits<double>::quiet_NaN());
    const std::vector<double> before = parameter(skipping.model(), "decoder.layers.0.fc1.weight").to_vector();
    const StepResult skipped = skipping.train_step({poisoned});
    CHECK_FALSE(skipped.applied);
    CHECK(skipping.num_updates() == 0);
    CHECK(parameter(skipping.model(), "decoder.layers.0.fc1.weight").to_vector() == before);
    e.select(0, 19).copy_(from_doubles(row, {int64_t(row.size())}, DType::Float32));
    CHECK(skipping.train_step({clean}).applied);
    CHECK(skipping.num_updates() == 1);
    CHECK(parameter(skipping.model(), "decoder.layers.0.fc1.weight").to_vector() != before);
  }
}

TEST_CASE("trainer: update-freq 2 over half batches equals update-freq 1 over the whole batch", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_update_freq");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/whole");
  options.model_overrides.push_back("dropout=0");
  options.optimizer = "nag";  // linear in the gradient: differences are not amplified
  options.lr_scheduler = "fixed";
  options.lr = {0.5};
  options.clip_norm = 0.1;  // clipping acts on the accumulated, normalised gradient
  Trainer whole(options);
  options.save_dir = root + "/halves";
  Trainer halves(options);
  REQUIRE(bitwise_equal(whole.model(), halves.model()));

  const StepResult one = whole.train_step({make_batch(kRows)});
  const StepResult two = halves.train_step({make_batch({kRows[0], kRows[1]}), make_batch({kRows[2], kRows[3]})});
  CHECK(one.ntokens == 18);
  CHECK(two.ntokens == one.ntokens);
  CHECK(two.loss_sum == Approx(one.loss_sum).epsilon(1e-5));
  CHECK(two.gnorm == Approx(one.gnorm).epsilon(1e-5));
  CHECK(one.gnorm > 0.1);  // so clipping was active
  CHECK(max_abs_difference(whole.model(), halves.model()) < 1e-6);

  options.save_dir = root + "/untouched";
  Trainer untouched(options);
  CHECK(max_abs_difference(whole.model(), untouched.model()) > 1e-3);  // the update did move the weights
}

TEST_CASE("trainer: training lowers the validation loss and writes logs and checkpoints", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_learns");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/ck");
  options.max_epoch = 6;
  options.log_interval = 5;
  options.checkpoints.keep_last_epochs = 2;
  Trainer trainer(options);
  const double initial = trainer.validate("valid").loss;
  const TrainingSummary summary = trainer.train();
  CHECK(summary.stop_reason.find("max-epoch") != std::string::npos);
  REQUIRE(summary.last_valid.has_value());
  CHECK(summary.last_valid->loss < initial - 0.3);
  CHECK(summary.best_valid_loss.has_value());
  CHECK(fs::exists(root + "/ck/checkpoint6.json"));
  CHECK(fs::exists(root + "/ck/checkpoint5.json"));
  CHECK_FALSE(fs::exists(root + "/ck/checkpoint4.json"));
  CHECK(fs::exists(root + "/ck/checkpoint_best.json"));

  std::ifstream log(root + "/ck/train_log.jsonl");
  int train_lines = 0, valid_lines = 0;
  for (std::string line; std::getline(log, line);) {
    const auto record = nlohmann::json::parse(line);
    train_lines += record.at("type") == "train";
    valid_lines += record.at("type") == "valid";
  }
  CHECK(train_lines == summary.num_updates / 5);
  CHECK(valid_lines == 6);

  // A checkpoint reloads into a model that scores the valid set exactly as the trainer did.
  const TrainedModel reloaded = load_trained_model(root + "/ck/checkpoint_last", Device::cpu());
  const ValidationResult again = evaluate_loss(*reloaded.model, open_split(reloaded.task, "valid"),
                                               nn::LabelSmoothedCrossEntropy(0.1, 1), options.max_tokens);
  CHECK(again.loss == Approx(summary.last_valid->loss).epsilon(1e-9));
}

TEST_CASE("trainer: data binarized with another dictionary of the same size is refused, not trained on",
          "[trainer]") {
  const std::string data_dir = testing::fresh_temp_dir("trainer_dictionary_edited");
  testing::write_reversal_corpus(data_dir);
  // dict.tgt.txt edited after preprocess: its first two words swapped, so every id of one
  // would name the other; the size is unchanged.
  data::Dictionary edited = data::Dictionary::load(data_dir + "/dict.tgt.txt");
  std::string text = edited.to_text();
  const size_t second_line = text.find('\n') + 1, third_line = text.find('\n', second_line) + 1;
  text = text.substr(second_line, third_line - second_line) + text.substr(0, second_line) + text.substr(third_line);
  std::ofstream(data_dir + "/dict.tgt.txt") << text;
  const TrainerOptions options = testing::tiny_trainer_options(data_dir, data_dir + "/ckpt");
  CHECK_THROWS_WITH(Trainer(options), Catch::Contains("train.src-tgt.tgt.bin") &&
                                          Catch::Contains("another dictionary than") &&
                                          Catch::Contains("dict.tgt.txt") && Catch::Contains("preprocess"));
}

TEST_CASE("trainer: a cosine floor above the peak is lowered in the current flags, refused in the old ones",
          "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_cosine_floor");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/current");
  options.lr_scheduler = "cosine";
  options.lr = {1e-3};
  options.min_lr = 1e-2;  // above the peak: the lr is the peak (a flat cycle)
  options.lr_period_updates = 10;
  options.warmup_updates = 0;
  Trainer current(options);
  CHECK(current.train_step({make_batch(kRows)}).lr == 1e-3);
  CHECK(current.train_step({make_batch(kRows)}).lr == 1e-3);
  options.save_dir = root + "/old";
  options.max_lr = 1e-3;  // the old flags: --lr is the floor, and must lie below --max-lr
  options.lr = {1e-2};
  options.min_lr = 0;
  CHECK_THROWS_WITH(Trainer(options), Catch::Contains("--max-lr") && Catch::Contains("must exceed"));
}

TEST_CASE("trainer: an epoch that ends with the lr at --stop-min-lr stops training, as fairseq's lr <= test does",
          "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_stop_min_lr");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/ck");
  options.lr_scheduler = "fixed";
  options.lr = {1e-3};
  options.warmup_updates = 0;
  options.max_epoch = 3;
  options.stop_min_lr = 1e-3;  // reached, not passed: fairseq stops all the same
  const TrainingSummary stopped = Trainer(options).train();
  CHECK(stopped.stop_reason == "lr 0.001 reached --stop-min-lr 0.001");
  CHECK_FALSE(fs::exists(root + "/ck/checkpoint2.json"));
}

TEST_CASE("trainer: a reduce_lr_on_plateau run resumed inside an epoch goes on bit-identically", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_plateau_resume");
  testing::write_reversal_corpus(root);
  // 4 updates an epoch. No epoch gains the 50% it takes to count as better than epoch 1, so with
  // patience 1 the lr shrinks when epoch 3 ends; the run is cut inside epoch 3, after epoch 2
  // was the first bad one: the resumed run must remember both the best loss and that count.
  TrainerOptions straight = testing::tiny_trainer_options(root, root + "/straight");
  straight.lr_scheduler = "reduce_lr_on_plateau";
  straight.lr = {3e-3};
  straight.warmup_updates = 2;
  straight.lr_threshold = 0.5;
  straight.lr_patience = 1;
  straight.max_update = 16;
  Trainer uninterrupted(straight);
  REQUIRE(uninterrupted.train().epoch == 4);
  const nlohmann::json last = load_checkpoint_metadata(root + "/straight/checkpoint_last").at("scheduler");
  CHECK(last.at("lr").get<double>() == Approx(3e-4).epsilon(1e-12));
  CHECK(last.at("bad_epochs") == 0);  // restarted by the shrink; the run stops before epoch 4's end counts

  TrainerOptions first_part = straight;
  first_part.save_dir = root + "/resumed";
  first_part.max_update = 10;
  Trainer(first_part).train();
  TrainerOptions rest = first_part;
  rest.max_update = 16;
  Trainer resumed(rest);
  REQUIRE(resumed.num_updates() == 10);
  resumed.train();
  CHECK(bitwise_equal(resumed.model(), uninterrupted.model()));
}
