// Tests of the trainer's --ema-decay (apps/training/trainer.hpp): an interrupted and resumed
// run keeps both the trained weights and their average bit-identical to an uninterrupted one;
// checkpoints hold the average in the weights file and validation measures it; before
// --ema-start-update the average is the weights; with --ema-update-freq N it steps after every
// N-th update only; resuming across the flag is refused.
#include <catch.hpp>

#include "synthetic_corpus.hpp"

using namespace attn;
using namespace attn::app;
using testing::bitwise_equal;

namespace {

// Whether the weights file of checkpoint `base` holds exactly the model's state dict.
bool weights_file_holds(const std::string& base, nn::EncoderDecoderModel& model) {
  const CheckpointContent saved = load_checkpoint(base, /*with_optimizer=*/false);
  const nn::NamedTensors state = model.state_dict();
  if (saved.model.size() != state.size()) return false;
  for (size_t i = 0; i < state.size(); ++i)
    if (saved.model[i].first != state[i].first || saved.model[i].second.to_vector() != state[i].second.to_vector())
      return false;
  return true;
}

// The tiny trainer's options with --ema-decay 0.9 for `max_update` updates, saving into
// root/save_dir, on a reversal corpus written into the fresh dir `root`.
TrainerOptions ema_options(const std::string& root, const std::string& save_dir, int64_t max_update) {
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/" + save_dir);
  options.max_update = max_update;
  options.ema_decay = 0.9;
  return options;
}

}  // namespace

TEST_CASE("trainer: --ema-decay keeps the average in checkpoints, validates it and resumes exactly", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_ema");
  TrainerOptions straight = ema_options(root, "straight", 12);
  straight.checkpoints.save_interval_updates = 5;
  Trainer uninterrupted(straight);
  uninterrupted.train();
  const std::string last = root + "/straight/checkpoint_last";
  CHECK_FALSE(weights_file_holds(last, uninterrupted.model()));  // the average, not the weights
  CHECK(load_checkpoint_metadata(last).at("ema").at("decay").get<double>() == 0.9);

  SECTION("an interrupted run resumes both the weights and their average bit for bit") {
    TrainerOptions first_half = straight;
    first_half.save_dir = root + "/resumed";
    first_half.max_update = 7;
    Trainer(first_half).train();
    TrainerOptions second_half = first_half;
    second_half.max_update = 12;
    Trainer resumed(second_half);
    REQUIRE(resumed.num_updates() == 7);
    resumed.train();
    CHECK(bitwise_equal(resumed.model(), uninterrupted.model()));
    CHECK(file_checksum(weights_path(root + "/resumed/checkpoint_last")) == file_checksum(weights_path(last)));
  }
  SECTION("validation measures the average: a run starting from the weights file scores the same") {
    TrainerOptions from_average = testing::tiny_trainer_options(root, root + "/from_average");
    from_average.restore_file = last;
    from_average.reset.optimizer = true;
    Trainer restarted(from_average);
    CHECK(restarted.validate("valid").loss == uninterrupted.validate("valid").loss);
  }
  SECTION("resuming across the flag is refused, unless the optimizer is reset") {
    TrainerOptions without = straight;
    without.save_dir = root + "/without";
    without.restore_file = last;
    without.ema_decay = 0.0;
    CHECK_THROWS_WITH(Trainer(without), Catch::Contains("with --ema-decay") && Catch::Contains("--reset-optimizer"));
    TrainerOptions plain = testing::tiny_trainer_options(root, root + "/plain");
    plain.max_update = 2;
    Trainer(plain).train();
    plain.ema_decay = 0.9;
    plain.max_update = 3;
    CHECK_THROWS_WITH(Trainer(plain), Catch::Contains("without --ema-decay"));
  }
}

TEST_CASE("trainer: --ema-update-freq N steps the average after every N-th update only", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_ema_freq");
  TrainerOptions options = ema_options(root, "run", 6);
  options.ema_update_freq = 3;
  Trainer averaged(options);
  averaged.train();

  // The trained weights before update 1, after 3 and after 6, from a run without the average
  // (which changes nothing of the training itself).
  TrainerOptions plain = options;
  plain.ema_decay = 0.0;
  plain.save_dir = root + "/plain";
  plain.max_update = 3;
  // [moment][entry]: the values, copied (a state dict shares the parameters' storage).
  std::vector<std::vector<std::vector<double>>> weights;
  const auto values = [](nn::EncoderDecoderModel& model) {
    std::vector<std::vector<double>> out;
    for (const auto& [name, tensor] : model.state_dict()) out.push_back(tensor.to_vector());
    return out;
  };
  {
    Trainer trainer(plain);
    weights.push_back(values(trainer.model()));
    trainer.train();
    weights.push_back(values(trainer.model()));
  }
  plain.max_update = 6;
  Trainer resumed(plain);
  resumed.train();
  weights.push_back(values(resumed.model()));

  const CheckpointContent saved = load_checkpoint(root + "/run/checkpoint_last", /*with_optimizer=*/false);
  REQUIRE(saved.model.size() == weights[0].size());
  double worst = 0;
  for (size_t i = 0; i < saved.model.size(); ++i) {
    const std::vector<double> got = saved.model[i].second.to_vector();
    const std::vector<double>& w0 = weights[0][i];
    const std::vector<double>& w3 = weights[1][i];
    const std::vector<double>& w6 = weights[2][i];
    for (size_t k = 0; k < got.size(); ++k)  // two steps: after update 3 and after update 6
      worst = std::max(worst, std::abs(got[k] - (0.9 * (0.9 * w0[k] + 0.1 * w3[k]) + 0.1 * w6[k])));
  }
  CHECK(worst < 1e-6);
  CHECK(load_checkpoint_metadata(root + "/run/checkpoint_last").at("ema").at("update_freq").get<int64_t>() == 3);
}

TEST_CASE("trainer: before --ema-start-update the average is the weights themselves", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_ema_start");
  TrainerOptions options = ema_options(root, "run", 6);
  options.ema_start_update = 7;
  Trainer trainer(options);
  trainer.train();
  CHECK(weights_file_holds(root + "/run/checkpoint_last", trainer.model()));
}
