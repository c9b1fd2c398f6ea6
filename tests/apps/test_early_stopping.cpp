// --patience (apps/training/early_stopping.hpp): the count of validations without a new best
// loss, the same update counted once, the state a checkpoint keeps; and the trainer stopping
// on it, and resuming the count from a checkpoint.
#include <catch.hpp>

#include <filesystem>

#include "apps/training/early_stopping.hpp"
#include "synthetic_corpus.hpp"

using namespace attn;
using namespace attn::app;

TEST_CASE("early stopping: counts validations in a row without a new best loss", "[early_stopping]") {
  EarlyStopping stopping(2, ValidationMetric::loss);
  stopping.observe(10, 5.0);
  stopping.observe(20, 5.0);  // equal is no improvement
  CHECK_FALSE(stopping.stop_reason());
  stopping.observe(30, 4.0);  // a new best starts the count again
  stopping.observe(40, 4.5);
  CHECK_FALSE(stopping.stop_reason());
  stopping.observe(40, 4.5);  // the same weights validated again: not counted twice
  CHECK_FALSE(stopping.stop_reason());
  stopping.observe(50, 4.1);
  REQUIRE(stopping.stop_reason());
  CHECK_THAT(*stopping.stop_reason(),
             Catch::Contains("validation loss has not improved on 4.000 for the last 2 validations (--patience 2)"));

  EarlyStopping restored(2, ValidationMetric::loss);
  restored.restore(stopping.state());
  CHECK(restored.state() == stopping.state());
  CHECK(restored.stop_reason() == stopping.stop_reason());
  EarlyStopping other_metric(2, ValidationMetric::bleu);  // the count of the loss means nothing for BLEU
  other_metric.restore(stopping.state());
  CHECK_FALSE(other_metric.stop_reason());
  CHECK(other_metric.state().at("best").is_null());

  EarlyStopping never(0, ValidationMetric::loss);  // the default: no early stopping
  for (int64_t update = 1; update <= 5; ++update) never.observe(update, 1.0);
  CHECK_FALSE(never.stop_reason());

  EarlyStopping bleu(1, ValidationMetric::bleu);  // higher is better
  bleu.observe(1, 10.0);
  bleu.observe(2, 12.0);
  CHECK_FALSE(bleu.stop_reason());
  bleu.observe(3, 11.0);
  REQUIRE(bleu.stop_reason());
  CHECK_THAT(*bleu.stop_reason(), Catch::Contains("validation bleu has not improved on 12.000"));
}

TEST_CASE("trainer --patience: stops after N validations without improvement, and resumes the count",
          "[early_stopping][trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_patience");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/run");
  options.lr_scheduler = "fixed";
  options.lr = {0.0};  // the weights never change: no validation improves on the first
  options.validate_interval_updates = 1;
  options.patience = 2;
  options.max_update = 20;
  {
    Trainer trainer(options);
    const TrainingSummary summary = trainer.train();
    CHECK(summary.num_updates == 3);  // update 1 sets the best, 2 and 3 do not improve on it
    CHECK_THAT(summary.stop_reason, Catch::Contains("for the last 2 validations (--patience 2)"));
  }
  SECTION("rerun with the same patience: already stopped") {
    Trainer trainer(options);
    CHECK(trainer.train().num_updates == 3);
  }
  SECTION("more patience: the count goes on from the checkpoint's") {
    options.patience = 4;
    Trainer trainer(options);
    CHECK(trainer.train().num_updates == 5);  // counted afresh it would stop at update 8
  }
  SECTION("--reset-meters starts the count afresh") {
    options.patience = 4;
    options.reset.meters = true;
    Trainer trainer(options);
    CHECK(trainer.train().num_updates == 3 + 5);  // update 4 the new best, 5–8 without improvement
  }
}
