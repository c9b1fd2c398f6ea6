// Kill-and-resume (issue 14): the `attnlab` binary (ATTNLAB_BINARY) trains the tiny model of
// synthetic_corpus.hpp and is killed with SIGKILL again and again — at pseudo-random times
// (fixed seed) and, every other time, inside a save (ATTNLAB_TEST_SAVE_PAUSE_MS makes each
// step of a save wait, and the kill comes while a numbered checkpoint's weights are staged in
// a temp file, its JSON not yet written) — and rerun with the same command until it finishes. Its checkpoint_last
// (weights and optimizer state) and checkpoint_best must equal an uninterrupted run's bit for
// bit, and best_loss must be the same.
#include <catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "synthetic_corpus.hpp"
#include "test_support.hpp"

using namespace attn::app;
using attn::test::finished;
using attn::test::read_file;
using attn::test::wait_until;
namespace fs = std::filesystem;

namespace {

constexpr int kKills = 12;

std::vector<std::string> training_command(const std::string& data_dir, const std::string& save_dir) {
  std::vector<std::string> command = testing::tiny_training_command(ATTNLAB_BINARY, data_dir, save_dir);
  command.insert(command.end(), {"--max-update", "30", "--save-interval-updates", "3", "--keep-interval-updates", "2"});
  return command;
}

// Starts the command with stdout and stderr appended to `log`; `save_pause_ms` > 0 slows saves.
pid_t start(const std::vector<std::string>& command, const std::string& log, int save_pause_ms) {
  if (save_pause_ms > 0) ::setenv("ATTNLAB_TEST_SAVE_PAUSE_MS", std::to_string(save_pause_ms).c_str(), 1);
  else ::unsetenv("ATTNLAB_TEST_SAVE_PAUSE_MS");
  return attn::test::start(command, log);
}

// Whether a save is under way: a numbered checkpoint's weights are being staged (a temp file
// NAME.safetensors.tmp.* newer than `since`, not a leftover of an earlier kill), its JSON not
// yet in place. Each staged file waits ATTNLAB_TEST_SAVE_PAUSE_MS, so this lasts long enough
// to be seen; the moment between renaming the staged files into place is too short.
bool inside_save(const std::string& save_dir, fs::file_time_type since) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(save_dir, error)) {
    const std::string file = entry.path().filename().string();
    const size_t staged = file.find(".safetensors.tmp.");
    if (staged == std::string::npos || file.find(".optimizer.") != std::string::npos) continue;
    if (fs::last_write_time(entry.path(), error) < since || error) continue;
    const std::string name = file.substr(0, staged);
    if (name.starts_with("checkpoint_") && name != "checkpoint_last" && name != "checkpoint_best" &&
        !fs::exists(fs::path(save_dir) / (name + ".json")))
      return true;
  }
  return false;
}

nlohmann::json metadata_of(const std::string& base) {
  return nlohmann::json::parse(read_file(base + ".json"))["metadata"];
}

}  // namespace

TEST_CASE("kill -9 during training and saves, resumed until done: bit-identical to an uninterrupted run") {
  const std::string root = testing::fresh_temp_dir("kill_resume");
  testing::write_reversal_corpus(root);
  const std::string straight = root + "/straight", killed = root + "/killed", log = root + "/killed.log";
  const pid_t uninterrupted = start(training_command(root, straight), root + "/straight.log", 0);
  REQUIRE(wait_until(uninterrupted, [] { return false; }) == 0);

  std::mt19937 random(14);
  int kills = 0, kills_inside_saves = 0;
  for (bool done = false; !done;) {
    const pid_t run = start(training_command(root, killed), log, /*save_pause_ms=*/20);
    const auto started = std::chrono::steady_clock::now();
    const fs::file_time_type started_on_disk = fs::file_time_type::clock::now();
    const auto delay = std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 600)(random));
    std::optional<int> status;
    if (kills >= kKills) {
      status = wait_until(run, [] { return false; });  // enough: let it finish
    } else if (kills % 2 == 1) {
      status = wait_until(run, [&] { return inside_save(killed, started_on_disk); });
    } else {
      status = wait_until(run, [&] { return std::chrono::steady_clock::now() - started >= delay; });
    }
    if (status) {
      INFO(read_file(log));
      REQUIRE(*status == 0);
      done = true;
    } else {
      kills_inside_saves += kills % 2 == 1;
      ::kill(run, SIGKILL);
      ::waitpid(run, nullptr, 0);
      ++kills;
    }
  }
  const std::string output = read_file(log);
  INFO(output);
  CHECK(kills_inside_saves >= 1);
  CHECK(output.find("left by an interrupted save") != std::string::npos);  // a kill inside a save was cleaned up
  for (const char* file : {"checkpoint_last.safetensors", "checkpoint_last.optimizer.safetensors",
                           "checkpoint_best.safetensors", "checkpoint_best.optimizer.safetensors"}) {
    INFO(file);
    CHECK(read_file(killed + "/" + file) == read_file(straight + "/" + file));
  }
  CHECK(metadata_of(killed + "/checkpoint_last")["num_updates"] == 30);
  CHECK(metadata_of(killed + "/checkpoint_best")["best_loss"] == metadata_of(straight + "/checkpoint_best")["best_loss"]);
  CHECK(metadata_of(killed + "/checkpoint_last")["best_loss"] == metadata_of(straight + "/checkpoint_last")["best_loss"]);
  CHECK_FALSE(fs::exists(killed + "/train.lock"));
}
