// Tests of how apps/trainer treats its save dir on a tiny synthetic corpus (issue 14): a
// save dir whose checkpoints cannot be resumed stops training with an error naming them;
// resume takes the newest complete checkpoint and finishes an interrupted save and end of
// run; impossible or mistyped metadata is refused naming the key; the save dir lock (live,
// stale, foreign, unwritable dir); leftovers of interrupted saves (and a torn last log
// record) are removed, nothing else. The kill -9 version of these runs is test_kill_resume.cpp.
#include <catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "synthetic_corpus.hpp"

using namespace attn;
using namespace attn::app;
namespace fs = std::filesystem;

namespace {

// Rewrites one key of a checkpoint's metadata (its tensor files stay valid: the checksums
// in the JSON cover only them).
void set_metadata(const std::string& base, const std::string& key, const nlohmann::json& value) {
  nlohmann::json j = nlohmann::json::parse(std::ifstream(metadata_path(base)));
  j["metadata"][key] = value;
  std::ofstream(metadata_path(base)) << j.dump(2);
}

// The checkpoints of `dir` with the given file ending.
std::vector<std::string> files_ending(const std::string& dir, const std::string& ending) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().string().ends_with(ending)) found.push_back(entry.path().string());
  return found;
}

}  // namespace

TEST_CASE("trainer: a save dir whose checkpoints cannot be resumed stops training instead of starting over",
          "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_unrestorable");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/ck");
  options.max_update = 6;
  options.checkpoints.save_interval_updates = 2;
  Trainer(options).train();
  options.max_update = 8;

  SECTION("all optimizer files deleted: weights only, resumable on purpose with --reset-optimizer") {
    for (const std::string& path : files_ending(root + "/ck", ".optimizer.safetensors")) fs::remove(path);
    CHECK_THROWS_WITH(Trainer(options), Catch::Contains("none can be resumed") &&
                                            Catch::Contains("checkpoint_last.optimizer.safetensors") &&
                                            Catch::Contains("--reset-optimizer"));
    options.reset.optimizer = true;
    Trainer weights_only(options);
    CHECK(weights_only.restored_from() == root + "/ck/checkpoint_last");
    CHECK(weights_only.num_updates() == 0);
  }
  SECTION("every JSON truncated: the error names each file") {
    for (const std::string& path : files_ending(root + "/ck", ".json"))
      if (fs::path(path).stem().string().starts_with("checkpoint")) fs::resize_file(path, fs::file_size(path) / 2);
    CHECK_THROWS_WITH(Trainer(options), Catch::Contains("checkpoint_last.json") &&
                                            Catch::Contains("checkpoint_1_2.json") && Catch::Contains("--restore-file"));
  }
  SECTION("every weights file torn") {
    for (const std::string& path : files_ending(root + "/ck", ".json"))
      if (fs::path(path).stem().string().starts_with("checkpoint"))
        fs::resize_file(weights_path(checkpoint_base(path)), 100);
    CHECK_THROWS_WITH(Trainer(options), Catch::Contains("checkpoint_best.safetensors") && Catch::Contains("torn"));
  }
  CHECK_FALSE(fs::exists(root + "/ck/train.lock"));  // released on the error too
}

TEST_CASE("trainer: resume takes the newest complete checkpoint and finishes the interrupted end of a run",
          "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_newest");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/straight");
  options.max_update = 10;  // 4 updates an epoch: ends inside epoch 3
  options.checkpoints.save_interval_updates = 5;
  Trainer straight(options);
  const TrainingSummary full = straight.train();
  const std::string straight_best = file_checksum(root + "/straight/checkpoint_best.safetensors");
  options.save_dir = root + "/cut";

  SECTION("a checkpoint_E_U newer than checkpoint_last is preferred") {
    options.max_update = 10;
    Trainer(options).train();
    copy_checkpoint(root + "/cut/checkpoint_2_5", root + "/cut/checkpoint_last");  // checkpoint_last at update 5
    Trainer resumed(options);
    CHECK(resumed.restored_from() == root + "/cut/checkpoint_3_10");
    CHECK(resumed.num_updates() == 10);
    // finishing the save of update 10 restored checkpoint_last
    CHECK(load_checkpoint_metadata(root + "/cut/checkpoint_last").at("num_updates") == 10);
  }
  SECTION("killed after the last update, before its validation: the rerun validates and updates checkpoint_best") {
    Trainer(options).train();
    // Turn the save dir into what a kill between the save of update 10 and the final
    // validation leaves: that save unvalidated under its names, best_loss and checkpoint_best
    // as the end of epoch 2 left them.
    const std::string cut = root + "/cut/";
    const nlohmann::json epoch2 = load_checkpoint_metadata(cut + "checkpoint2");
    for (const char* name : {"checkpoint_3_10", "checkpoint_last"}) {
      set_metadata(cut + name, "validated", false);
      set_metadata(cut + name, "best_loss", epoch2.at("best_loss"));
      set_metadata(cut + name, "save", {{"epoch", 3}, {"end_of_epoch", false}, {"is_best", false}});
    }
    if (load_checkpoint_metadata(cut + "checkpoint_best").at("num_updates") == 10)
      copy_checkpoint(cut + (epoch2.at("save").at("is_best") == true ? "checkpoint2" : "checkpoint1"), cut + "checkpoint_best");
    {
      Trainer rerun(options);
      CHECK(rerun.num_updates() == 10);
      const TrainingSummary summary = rerun.train();
      REQUIRE(summary.last_valid.has_value());
      CHECK(summary.last_valid->loss == full.last_valid->loss);
      CHECK(summary.best_valid_loss == full.best_valid_loss);
    }
    CHECK(file_checksum(cut + "checkpoint_best.safetensors") == straight_best);
    CHECK(load_checkpoint_metadata(cut + "checkpoint_last").at("validated") == true);
    CHECK_FALSE(Trainer(options).train().last_valid.has_value());  // done: nothing more to do
  }
}

TEST_CASE("trainer: impossible or mistyped checkpoint metadata is refused naming the file and the key", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_bad_metadata");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/ck");
  options.max_update = 2;
  options.checkpoints.save_epoch_checkpoints = false;
  Trainer(options).train();
  options.restore_file = "checkpoint_last";
  const std::string last = root + "/ck/checkpoint_last";
  for (const auto& [key, value] : {std::pair<std::string, nlohmann::json>{"num_updates", -1000},
                                   {"num_updates", "12"},
                                   {"loader", {{"epoch", 0}, {"batch_index", 1}}},
                                   {"best_loss", "low"},
                                   {"epoch_meters", {{"ntokens", -3}}},
                                   {"epoch_meters", {{"loss_sum", "x"}}},
                                   {"lr", nullptr}}) {
    const nlohmann::json saved = load_checkpoint_metadata(last).at(key);
    set_metadata(last, key, value);
    CHECK_THROWS_WITH(Trainer(options), Catch::Contains("checkpoint_last.json") && Catch::Contains("metadata." + key));
    set_metadata(last, key, saved);
  }
  CHECK(Trainer(options).num_updates() == 2);
}

TEST_CASE("trainer: the save dir is locked while a trainer uses it", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_lock");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/ck");
  const std::string lock = root + "/ck/train.lock";
  {
    Trainer first(options);
    REQUIRE(fs::exists(lock));
    CHECK_THROWS_WITH(Trainer(options), Catch::Contains("in use by another training run") &&
                                            Catch::Contains(fmt::format("pid {}", ::getpid())) && Catch::Contains(lock));
  }
  CHECK_FALSE(fs::exists(lock));  // released by the trainer that held it

  SECTION("a lock whose process is gone is taken over") {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);  // a pid that no longer runs
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::ofstream(lock) << nlohmann::json{{"pid", child}, {"host", host}, {"started", "yesterday"}}.dump();
    CHECK_NOTHROW(Trainer(options));
    CHECK_FALSE(fs::exists(lock));
  }
  SECTION("a lock whose pid runs but is another process than the one that wrote it is taken over") {
    {
      Trainer holder(options);  // writes this process's pid and start time
      nlohmann::json owner = nlohmann::json::parse(std::ifstream(lock));
      REQUIRE_FALSE(owner.at("process_start").get<std::string>().empty());
      owner["process_start"] = "1";  // as if a process with our pid had started at boot and been killed
      std::ofstream(lock) << owner.dump();
      CHECK_NOTHROW(Trainer(options));
    }
    CHECK_FALSE(fs::exists(lock));
  }
  SECTION("a lock of another host, or one attnlab did not write, is left to the user") {
    std::ofstream(lock) << nlohmann::json{{"pid", 1}, {"host", "elsewhere.example"}, {"started", "now"}}.dump();
    CHECK_THROWS_WITH(Trainer(options), Catch::Contains("elsewhere.example"));
    std::ofstream(lock) << "garbage";
    CHECK_THROWS_WITH(Trainer(options), Catch::Contains("not a lock attnlab wrote"));
    CHECK(fs::exists(lock));
  }
  SECTION("a save dir where no file can be created fails before training, naming it") {
    options.save_dir = "/proc/self";  // not writable, even for root
    CHECK_THROWS_WITH(Trainer(options), Catch::Contains("save dir /proc/self is not writable"));
  }
}

TEST_CASE("trainer: leftovers of interrupted saves are removed at start", "[trainer]") {
  const std::string root = testing::fresh_temp_dir("trainer_leftovers");
  testing::write_reversal_corpus(root);
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/ck");
  options.max_update = 4;
  options.checkpoints.save_interval_updates = 2;
  options.checkpoints.keep_interval_updates = 1;
  Trainer(options).train();
  const std::string ck = root + "/ck/";
  std::ofstream(ck + "checkpoint_last.safetensors.tmp.Ab12Cd") << "partial";
  std::ofstream(ck + "checkpoint_1_6.json.tmp.4242") << "{";
  fs::copy_file(ck + "checkpoint_last.safetensors", ck + "checkpoint_1_6.safetensors");  // its JSON never written
  fs::copy_file(ck + "checkpoint_last.json", ck + "checkpoint7.json");                   // its weights gone
  fs::copy_file(ck + "checkpoint_last.optimizer.safetensors", ck + "checkpoint_1_2.optimizer.safetensors");  // rotation cut off
  for (const char* foreign : {"notes.safetensors.tmp.1", "model.safetensors", "checkpoint99999999999999999999.json"})
    std::ofstream(ck + foreign) << "the user's";
  std::ofstream(ck + "train_log.jsonl", std::ios::app) << "{\"type\": \"tra";  // a record torn by a power cut
  options.max_update = 6;
  Trainer resumed(options);
  CHECK(resumed.num_updates() == 4);
  for (const char* removed : {"checkpoint_last.safetensors.tmp.Ab12Cd", "checkpoint_1_6.json.tmp.4242",
                              "checkpoint_1_6.safetensors", "checkpoint7.json", "checkpoint_1_2.optimizer.safetensors"})
    CHECK_FALSE(fs::exists(ck + removed));
  for (const char* kept : {"notes.safetensors.tmp.1", "model.safetensors", "checkpoint99999999999999999999.json"})
    CHECK(fs::exists(ck + kept));
  resumed.train();  // the stray numbered name neither breaks rotation nor is rotated away
  CHECK(fs::exists(ck + "checkpoint_2_6.json"));
  CHECK_FALSE(fs::exists(ck + "checkpoint_1_4.json"));
  CHECK(fs::exists(ck + "checkpoint99999999999999999999.json"));
  std::ifstream log(ck + "train_log.jsonl");
  for (std::string line; std::getline(log, line);)  // the torn record is gone, the resumed run's lines are whole
    CHECK_NOTHROW(nlohmann::json::parse(line));
}
