// Tests of the trainer's --ema-decay (apps/training/trainer.hpp): an interrupted and resumed
// run keeps both the trained weights and their average bit-identical to an uninterrupted one;
// checkpoints hold the average in the weights file and validation measures it; before
// --ema-start-update the average is the weights; resuming across the flag is refused.
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

TEST_CASE("trainer: before --ema-start-update the average is the weights themselves", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_ema_start");
  TrainerOptions options = ema_options(root, "run", 6);
  options.ema_start_update = 7;
  Trainer trainer(options);
  trainer.train();
  CHECK(weights_file_holds(root + "/run/checkpoint_last", trainer.model()));
}
