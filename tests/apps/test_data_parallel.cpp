// Data-parallel training (apps/training/data_parallel.hpp) with the real `attnlab` binary
// (ATTNLAB_BINARY) under `mpirun -np 2` on this machine, on the tiny task of
// synthetic_corpus.hpp with dropout 0.1:
//   * 2 ranks train to the same parameters as 1 process with --update-freq 2 over 20 updates
//     (to float tolerance: only the order of the gradient sums differs) and reach the same
//     data position and generator state;
//   * 3 ranks equal 1 process with --update-freq 3, though the last update of each epoch
//     leaves ranks 1 and 2 without a batch;
//   * gradients summed in buckets during backward (--ddp-backend c10d, the default; also with
//     a tiny --bucket-cap-mb: many buckets) and in one buffer after it (no_c10d) give
//     bit-identical parameters with 2 ranks (a sum of two does not depend on grouping);
//   * sharded validation: the 2 ranks' validation numbers are one process's;
//   * 2 ranks stopped at update 10 and resumed equal, bit for bit, 2 ranks run straight to 20;
//   * a rank killed with SIGKILL, or failing with an error, ends the whole job with a non-zero
//     status and a message naming the rank, well within the time limit (no hang);
//   * fairseq's --distributed-* flags: refused with a message where they ask for what the
//     launcher did not start;
//   * ranks started one by one, meeting through --distributed-init-method (gloo): over
//     tcp:// and file:// they train to the parameters of --update-freq 2 (bit for bit those of
//     each other) and resume bit for bit; the rendezvous directory is gone afterwards; ranks
//     given different world sizes stop at once; a killed rank ends the other with an error
//     instead of a hang.
// Without mpirun on PATH the mpirun cases report the program skipped.
#include <catch.hpp>

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "core/safetensors.hpp"
#include "synthetic_corpus.hpp"
#include "test_support.hpp"

using namespace attn::app;
using attn::test::ProgramRun;
using attn::test::read_file;
namespace fs = std::filesystem;

namespace {

constexpr int kTimeoutSeconds = 60;  // far above any run here: only a hang reaches it

// `launcher` (empty, or mpirun's words) + the tiny training command + `flags`.
std::vector<std::string> training_command(const std::vector<std::string>& launcher, const std::string& data_dir,
                                          const std::string& save_dir, const std::vector<std::string>& flags) {
  std::vector<std::string> command = launcher;
  const std::vector<std::string> train = testing::tiny_training_command(ATTNLAB_BINARY, data_dir, save_dir);
  command.insert(command.end(), train.begin(), train.end());
  command.insert(command.end(), flags.begin(), flags.end());
  return command;
}

// `command` with `flag`'s value replaced by `value` (the flag must be there).
std::vector<std::string> with_value(std::vector<std::string> command, const std::string& flag, const std::string& value) {
  const auto at = std::find(command.begin(), command.end(), flag);
  REQUIRE(at != command.end());
  *(at + 1) = value;
  return command;
}

ProgramRun train(const std::vector<std::string>& command, const std::string& save_dir) {
  fs::create_directories(save_dir);
  return attn::test::run_program(command, save_dir + ".log", kTimeoutSeconds);
}

void require_success(const ProgramRun& run) {
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
}

double max_abs_difference(const attn::SafetensorsFile& a, const attn::SafetensorsFile& b) {
  REQUIRE(a.tensors.size() == b.tensors.size());
  double worst = 0.0;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    REQUIRE(a.tensors[i].first == b.tensors[i].first);
    const std::vector<double> x = a.tensors[i].second.to_vector(), y = b.tensors[i].second.to_vector();
    REQUIRE(x.size() == y.size());
    for (size_t j = 0; j < x.size(); ++j) worst = std::max(worst, std::abs(x[j] - y[j]));
  }
  return worst;
}

// The "valid" records of a run's train_log.jsonl.
std::vector<nlohmann::json> valid_records(const std::string& save_dir) {
  std::vector<nlohmann::json> records;
  std::istringstream log(read_file(save_dir + "/train_log.jsonl"));
  for (std::string line; std::getline(log, line);) {
    nlohmann::json record = nlohmann::json::parse(line);
    if (record["type"] == "valid") records.push_back(std::move(record));
  }
  return records;
}

nlohmann::json metadata_of(const std::string& base) {
  return nlohmann::json::parse(read_file(base + ".json"))["metadata"];
}

// The pid of the process that mpirun (`launcher_pid`) started as rank `rank`, once it runs.
std::optional<pid_t> rank_pid(pid_t launcher_pid, int rank) {
  const std::string wanted = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (!std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream stat(entry.path() / "stat"), environ(entry.path() / "environ");
    std::string pid, command, state;
    pid_t parent = 0;
    if (!(stat >> pid >> command >> state >> parent) || parent != launcher_pid) continue;
    for (std::string variable; std::getline(environ, variable, '\0');)
      if (variable == wanted) return pid_t(std::stoi(name));
  }
  return std::nullopt;
}

// The corpus in `root`, and one process trained on it for 20 updates with --update-freq 2 into
// `save_dir`: where 2 ranks must arrive.
void train_reference(const std::string& root, const std::string& save_dir) {
  testing::write_reversal_corpus(root);
  require_success(train(training_command({}, root, save_dir, {"--max-update", "20", "--update-freq", "2"}), save_dir));
}

// --distributed-init-method tcp:// on a free port of this machine.
std::string loopback_address() { return "tcp://127.0.0.1:" + std::to_string(attn::test::free_tcp_port()); }

bool has_checkpoint(const std::string& save_dir) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(save_dir, error))
    if (entry.path().extension() == ".json" && entry.path().filename().string().starts_with("checkpoint")) return true;
  return false;
}

}  // namespace

TEST_CASE("data parallel: 2 ranks = --update-freq 2; resume = straight run; a dead rank ends the job") {
  const std::optional<std::vector<std::string>> mpirun = attn::test::mpirun_command(2);
  if (!mpirun) {
    attn::test::skip_program("mpirun is not on PATH (Debian: apt-get install openmpi-bin)");
    return;
  }
  // Catch2 runs the test case once per section: the data and the two reference runs are
  // made the first time only.
  static const std::string root = testing::fresh_temp_dir("data_parallel");
  const std::vector<std::string> twenty = {"--max-update", "20"};
  const std::string one_process = root + "/one_process", two_ranks = root + "/two_ranks";
  if (!fs::exists(two_ranks + "/checkpoint_last.json")) {
    train_reference(root, one_process);
    require_success(train(training_command(*mpirun, root, two_ranks, twenty), two_ranks));
  }

  SECTION("the parameters of 2 ranks are those of one process with --update-freq 2") {
    const auto single = attn::load_safetensors(one_process + "/checkpoint_last.safetensors");
    const auto parallel = attn::load_safetensors(two_ranks + "/checkpoint_last.safetensors");
    CHECK(max_abs_difference(single, parallel) < 1e-5);
    const auto after_epoch_one = attn::load_safetensors(one_process + "/checkpoint1.safetensors");
    CHECK(max_abs_difference(single, after_epoch_one) > 1e-3);  // the later updates moved them
    const nlohmann::json a = metadata_of(one_process + "/checkpoint_last"), b = metadata_of(two_ranks + "/checkpoint_last");
    CHECK(b["num_updates"] == 20);
    CHECK(a["loader"] == b["loader"]);
    CHECK(a["rng"] == b["rng"]);  // the same dropout streams were consumed
    // Only rank 0 writes the train log: one "done" record, as one process writes.
    const std::string log = read_file(two_ranks + "/train_log.jsonl");
    CHECK(log.find("\"done\"") != std::string::npos);
    CHECK(log.find("\"done\"") == log.rfind("\"done\""));
    // Validation, sharded over the ranks and all-reduced, gives one process's numbers (to the
    // rounding of the parameters' tolerance above and of the sums' order).
    const std::vector<nlohmann::json> one = valid_records(one_process), two = valid_records(two_ranks);
    REQUIRE(one.size() == two.size());
    REQUIRE_FALSE(one.empty());
    for (size_t i = 0; i < one.size(); ++i) {
      CHECK(two[i]["update"] == one[i]["update"]);
      CHECK(two[i]["loss"].get<double>() == Approx(one[i]["loss"].get<double>()).epsilon(1e-5));
      CHECK(two[i]["nll_loss"].get<double>() == Approx(one[i]["nll_loss"].get<double>()).epsilon(1e-5));
    }
  }

  SECTION("buckets during backward, many tiny buckets, and one buffer after it give the same parameters") {
    const std::string reference = read_file(two_ranks + "/checkpoint_last.safetensors");  // c10d, 25 MiB
    for (const std::vector<std::string>& backend :
         {std::vector<std::string>{"--ddp-backend", "no_c10d"}, {"--bucket-cap-mb", "0.001"}}) {
      const std::string save_dir = root + "/backend_" + backend[1];
      std::vector<std::string> flags = twenty;
      flags.insert(flags.end(), backend.begin(), backend.end());
      require_success(train(training_command(*mpirun, root, save_dir, flags), save_dir));
      INFO(backend[0] << " " << backend[1]);
      CHECK(read_file(save_dir + "/checkpoint_last.safetensors") == reference);
    }
  }

  SECTION("3 ranks equal one process with --update-freq 3, also where an update leaves ranks without a batch") {
    // 4 batches per epoch here: every epoch's second update has a batch for rank 0 only. Three
    // ranks sum in another order than one process accumulates ((a + c) + b, say), and Adam
    // turns such rounding differences of near-zero gradients into visible ones: NAG, linear
    // in the gradient, keeps them at rounding size.
    const std::optional<std::vector<std::string>> three = attn::test::mpirun_command(3);
    const std::string accumulating = root + "/update_freq_3", ranks = root + "/three_ranks";
    auto command = [&](const std::vector<std::string>& launcher, const std::string& save_dir,
                       const std::vector<std::string>& flags) {
      std::vector<std::string> words = training_command(launcher, root, save_dir, flags);
      words = with_value(with_value(words, "--optimizer", "nag"), "--lr-scheduler", "fixed");
      return with_value(words, "--lr", "0.05");
    };
    require_success(train(command({}, accumulating, {"--max-update", "8", "--update-freq", "3"}), accumulating));
    require_success(train(command(*three, ranks, {"--max-update", "8"}), ranks));
    const nlohmann::json a = metadata_of(accumulating + "/checkpoint_last"), b = metadata_of(ranks + "/checkpoint_last");
    CHECK(a["loader"] == nlohmann::json({{"epoch", 5}, {"batch_index", 0}}));  // 2 updates per epoch of 4 batches
    CHECK(a["loader"] == b["loader"]);
    CHECK(max_abs_difference(attn::load_safetensors(accumulating + "/checkpoint_last.safetensors"),
                             attn::load_safetensors(ranks + "/checkpoint_last.safetensors")) < 1e-5);
  }

  SECTION("2 ranks stopped at update 10 and resumed equal 2 ranks run straight to 20, bit for bit") {
    const std::string resumed = root + "/resumed";
    require_success(train(training_command(*mpirun, root, resumed, {"--max-update", "10"}), resumed));
    const ProgramRun second = train(training_command(*mpirun, root, resumed, twenty), resumed);
    require_success(second);
    CHECK(second.output.find("resumed from") != std::string::npos);
    for (const char* file : {"checkpoint_last.safetensors", "checkpoint_last.optimizer.safetensors"}) {
      INFO(file);
      CHECK(read_file(resumed + "/" + file) == read_file(two_ranks + "/" + file));
    }
  }

  SECTION("a rank killed with SIGKILL ends the job with an error naming it") {
    const std::string killed = root + "/killed";
    fs::create_directories(killed);
    const pid_t launcher = attn::test::start(
        training_command(*mpirun, root, killed, {"--max-update", "100000", "--save-interval-updates", "2"}),
        killed + ".log");
    std::optional<pid_t> rank_one;
    std::optional<int> status = attn::test::wait_until(launcher, [&] {
      if (!rank_one) rank_one = rank_pid(launcher, 1);
      return rank_one && has_checkpoint(killed);
    });
    INFO(read_file(killed + ".log"));
    REQUIRE_FALSE(status);  // still training
    ::kill(*rank_one, SIGKILL);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTimeoutSeconds);
    status = attn::test::wait_until(launcher, [&] { return std::chrono::steady_clock::now() >= deadline; });
    if (!status) ::kill(-launcher, SIGKILL);
    REQUIRE(status);  // the job ended: rank 0 does not wait forever for the dead rank
    CHECK(*status != 0);
    const std::string output = read_file(killed + ".log");
    CHECK(output.find("rank 1") != std::string::npos);
    CHECK(output.find("signal 9") != std::string::npos);
  }

  SECTION("an error on one rank stops all ranks with its message") {
    const std::string failing = root + "/failing";
    const ProgramRun run = train(training_command(*mpirun, root, failing, {"--distributed-rank", "0"}), failing);
    INFO(run.output);
    CHECK(run.exit_code > 0);
    CHECK(run.output.find("error on rank 1 of 2: --distributed-rank 0 contradicts the launcher") != std::string::npos);
    CHECK(run.output.find("stopping all ranks") != std::string::npos);
  }

  SECTION("--distributed-world-size must match mpirun -np") {
    const std::string mismatched = root + "/mismatched";
    const ProgramRun run = train(training_command(*mpirun, root, mismatched, {"--distributed-world-size", "3"}), mismatched);
    INFO(run.output);
    CHECK(run.exit_code > 0);
    CHECK(run.output.find("--distributed-world-size 3 contradicts the launcher, which started 2 ranks") != std::string::npos);
  }
}

// The training commands of `ranks` processes that meet at `init_method`, all saving to `save_dir`.
std::vector<attn::test::Program> ranks_meeting_at(const std::string& init_method, int ranks, const std::string& data_dir,
                                                  const std::string& save_dir, const std::vector<std::string>& flags) {
  fs::create_directories(save_dir);
  std::vector<attn::test::Program> programs;
  for (int rank = 0; rank < ranks; ++rank) {
    std::vector<std::string> words = flags;
    words.insert(words.end(), {"--distributed-init-method", init_method, "--distributed-world-size",
                               std::to_string(ranks), "--distributed-rank", std::to_string(rank)});
    programs.push_back({training_command({}, data_dir, save_dir, words), save_dir + ".rank" + std::to_string(rank)});
  }
  return programs;
}

void require_all_succeeded(const std::vector<ProgramRun>& runs) {
  for (const ProgramRun& run : runs) require_success(run);
}

TEST_CASE("data parallel without a launcher: ranks started one by one meet through --distributed-init-method") {
  static const std::string root = testing::fresh_temp_dir("data_parallel_rendezvous");
  const std::vector<std::string> twenty = {"--max-update", "20"};
  const std::string one_process = root + "/one_process", over_tcp = root + "/over_tcp";
  if (!fs::exists(over_tcp + "/checkpoint_last.json")) {
    train_reference(root, one_process);
    require_all_succeeded(
        attn::test::run_programs(ranks_meeting_at(loopback_address(), 2, root, over_tcp, twenty), kTimeoutSeconds));
  }

  SECTION("over tcp://, 2 ranks train to the parameters of one process with --update-freq 2") {
    CHECK(max_abs_difference(attn::load_safetensors(one_process + "/checkpoint_last.safetensors"),
                             attn::load_safetensors(over_tcp + "/checkpoint_last.safetensors")) < 1e-5);
    const nlohmann::json a = metadata_of(one_process + "/checkpoint_last"), b = metadata_of(over_tcp + "/checkpoint_last");
    CHECK(b["num_updates"] == 20);
    CHECK(a["loader"] == b["loader"]);
    CHECK(a["rng"] == b["rng"]);
    const std::string log = read_file(over_tcp + "/train_log.jsonl");
    CHECK(log.find("\"done\"") == log.rfind("\"done\""));  // rank 0 alone writes it
  }

  SECTION("over file://, the same parameters bit for bit, and the rendezvous directory is removed") {
    const std::string over_file = root + "/over_file", meeting_place = root + "/meeting_place";
    require_all_succeeded(
        attn::test::run_programs(ranks_meeting_at("file://" + meeting_place, 2, root, over_file, twenty), kTimeoutSeconds));
    CHECK(read_file(over_file + "/checkpoint_last.safetensors") == read_file(over_tcp + "/checkpoint_last.safetensors"));
    CHECK_FALSE(fs::exists(meeting_place));
  }

  SECTION("stopped at update 10 and started again, they end where the straight run ended, bit for bit") {
    const std::string resumed = root + "/resumed_tcp";
    for (const char* updates : {"10", "20"}) {
      require_all_succeeded(attn::test::run_programs(
          ranks_meeting_at(loopback_address(), 2, root, resumed, {"--max-update", updates}), kTimeoutSeconds));
    }
    for (const char* file : {"checkpoint_last.safetensors", "checkpoint_last.optimizer.safetensors"}) {
      INFO(file);
      CHECK(read_file(resumed + "/" + file) == read_file(over_tcp + "/" + file));
    }
  }

  SECTION("ranks started with different world sizes both stop, naming the two sizes") {
    std::vector<attn::test::Program> ranks = ranks_meeting_at(loopback_address(), 2, root, root + "/sizes", twenty);
    ranks[1].command = with_value(ranks[1].command, "--distributed-world-size", "3");
    const std::vector<ProgramRun> runs = attn::test::run_programs(ranks, kTimeoutSeconds);
    INFO(runs[0].output << runs[1].output);
    CHECK(runs[0].exit_code == 1);
    CHECK(runs[1].exit_code == 1);
    CHECK(runs[0].output.find("rank 0 was started with --distributed-world-size 2, rank 1 with 3") != std::string::npos);
    CHECK(runs[1].output.find("rank 1 was started with --distributed-world-size 3, rank 0 with 2") != std::string::npos);
  }

  SECTION("a rank killed with SIGKILL ends the other with an error, not a hang") {
    const std::string killed = root + "/killed";
    const std::vector<attn::test::Program> ranks = ranks_meeting_at(
        loopback_address(), 2, root, killed, {"--max-update", "100000", "--save-interval-updates", "2"});
    const pid_t rank_zero = attn::test::start(ranks[0].command, ranks[0].log);
    const pid_t rank_one = attn::test::start(ranks[1].command, ranks[1].log);
    std::optional<int> status = attn::test::wait_until(rank_zero, [&] { return has_checkpoint(killed); });
    INFO(read_file(ranks[0].log));
    REQUIRE_FALSE(status);  // still training
    ::kill(rank_one, SIGKILL);
    ::waitpid(rank_one, nullptr, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTimeoutSeconds);
    status = attn::test::wait_until(rank_zero, [&] { return std::chrono::steady_clock::now() >= deadline; });
    if (!status) ::kill(-rank_zero, SIGKILL);
    REQUIRE(status);  // rank 0 does not wait forever for the dead rank
    CHECK(*status == 1);
    const std::string output = read_file(ranks[0].log);
    INFO(output);
    CHECK(output.find("error on rank 0 of 2: gloo:") != std::string::npos);
    // gloo's "Connection reset (closed) by peer" when it was reading, "Broken pipe" when writing.
    CHECK((output.find("by peer") != std::string::npos || output.find("Broken pipe") != std::string::npos));
  }
}

TEST_CASE("data parallel: without a launcher, flags asking for other processes are refused with how to start them") {
  const std::string root = testing::fresh_temp_dir("data_parallel_flags");
  testing::write_reversal_corpus(root);
  const std::string save_dir = root + "/run";
  const ProgramRun world = train(training_command({}, root, save_dir, {"--distributed-world-size", "2"}), save_dir);
  CHECK(world.exit_code == 1);
  CHECK(world.output.find("mpirun -np 2 attnlab train") != std::string::npos);
  const ProgramRun tcp =
      train(training_command({}, root, save_dir, {"--distributed-init-method", "tcp://localhost:23456"}), save_dir);
  CHECK(tcp.exit_code == 1);
  CHECK(tcp.output.find("--distributed-init-method tcp://localhost:23456 needs --distributed-world-size N") !=
        std::string::npos);
  const ProgramRun rank = train(training_command({}, root, save_dir, {"--distributed-rank", "1"}), save_dir);
  CHECK(rank.exit_code == 1);
  CHECK(rank.output.find("rank 0 of a world of one") != std::string::npos);
}
