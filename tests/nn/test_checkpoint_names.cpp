// Tests of nn/checkpoint_names: fairseq's numbered names are written and read back; other
// names — checkpoint_last, a user's file, a number too long for int64 such as a stray
// checkpoint99999999999999999999.json — are not numbered and never listed (issue 14: such a
// file stopped training with "stoll" after an epoch).
#include <catch.hpp>

#include <filesystem>
#include <fstream>

#include "nn/checkpoint_names.hpp"
#include "test_support.hpp"

using namespace attn::nn;

TEST_CASE("checkpoint names: numbered names round-trip; other names and overlong numbers are not numbered") {
  CHECK(checkpoint_number(epoch_checkpoint_name(3), CheckpointNumbering::Epoch) == 3);
  CHECK(checkpoint_number(update_checkpoint_name(3, 1500), CheckpointNumbering::Update) == 1500);
  CHECK_FALSE(checkpoint_number("checkpoint_3_1500", CheckpointNumbering::Epoch));
  CHECK_FALSE(checkpoint_number("checkpoint3", CheckpointNumbering::Update));
  for (const char* other : {"checkpoint_last", "checkpoint_best", "checkpoint", "checkpoint-3", "checkpoint3a",
                            "checkpoint99999999999999999999", "checkpoint_1_99999999999999999999", "model"}) {
    INFO(other);
    CHECK_FALSE(checkpoint_number(other, CheckpointNumbering::Epoch));
    CHECK_FALSE(checkpoint_number(other, CheckpointNumbering::Update));
  }

  attn::test::TempDir dir;
  for (const char* file : {"checkpoint2.json", "checkpoint10.json", "checkpoint99999999999999999999.json",
                           "checkpoint_1_5.json", "checkpoint2.safetensors"})
    std::ofstream(dir.file(file)) << "{}";
  const std::vector<NumberedCheckpoint> epochs = numbered_checkpoints(dir.dir.string(), CheckpointNumbering::Epoch, ".json");
  REQUIRE(epochs.size() == 2);
  CHECK(epochs[0].number == 10);
  CHECK(epochs[1].path == dir.file("checkpoint2.json"));
}
