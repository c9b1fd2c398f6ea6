// The communicators of dist/: a world of one leaves buffers as they are; the MPI world sums
// (also with several non-blocking all-reduces in flight), broadcasts and synchronises. The
// MPI cases run inside `mpirun -np 2` of this very program (the outer run starts it and
// checks that every rank passed); without mpirun on PATH the program reports itself skipped.
#include <catch.hpp>

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "test_support.hpp"
#include "dist/mpi_communicator.hpp"
#include "dist/single_process_communicator.hpp"
#include "dist/world.hpp"

using namespace attn::dist;

namespace {

constexpr const char* kMpiTag = "[mpi-world]";  // the case the ranks run

// The checks each rank of the MPI case makes.
void check_collectives(Communicator& world) {
  REQUIRE(world.size() == 2);
  REQUIRE(world.name() == "MPI");
  const int rank = world.rank();
  std::vector<float> floats = {float(rank + 1), 0.5f, -float(rank)};
  world.all_reduce_sum(floats.data(), floats.size());
  CHECK(floats == std::vector<float>{3.0f, 1.0f, -1.0f});
  std::vector<double> doubles = {1e-300 * (rank + 1), 1e300};
  world.all_reduce_sum(doubles.data(), doubles.size());
  CHECK(doubles == std::vector<double>{3e-300, 2e300});
  // Two all-reduces in flight at once (MPI_Iallreduce), tested, then waited for.
  std::vector<float> first = {float(rank), 1.0f}, second = {2.0f * float(rank + 1)};
  const std::unique_ptr<PendingCollective> a = world.start_all_reduce_sum(first.data(), first.size(), nullptr);
  const std::unique_ptr<PendingCollective> b = world.start_all_reduce_sum(second.data(), second.size(), nullptr);
  a->test();
  b->wait();
  a->wait();
  CHECK(a->test());
  CHECK(first == std::vector<float>{1.0f, 2.0f});
  CHECK(second == std::vector<float>{6.0f});
  int value = rank == 1 ? 42 : 0;
  world.broadcast(&value, sizeof value, 1);
  CHECK(value == 42);
  CHECK(broadcast_string(world, rank == 0 ? "from rank 0" : "", 0) == "from rank 0");
  CHECK(broadcast_string(world, "", 1).empty());
  world.barrier();
}

}  // namespace

TEST_CASE("a world of one process: collectives leave buffers as they are") {
  SingleProcessCommunicator world;
  CHECK(world.rank() == 0);
  CHECK(world.size() == 1);
  std::vector<float> floats = {1.5f, -2.0f};
  world.all_reduce_sum(floats.data(), floats.size());
  CHECK(floats == std::vector<float>{1.5f, -2.0f});
  CHECK(world.start_all_reduce_sum(floats.data(), floats.size(), nullptr)->test());  // finished at once
  CHECK(floats == std::vector<float>{1.5f, -2.0f});
  CHECK(broadcast_string(world, "kept", 0) == "kept");
  CHECK_THROWS_WITH(world.broadcast(floats.data(), 4, 1), Catch::Contains("root 1 does not exist"));
  world.barrier();
}

TEST_CASE("without a launcher: a world of one, and flags asking for more are refused") {
  if (launched_by_mpi()) return;  // inside the ranks of the MPI case below
  CHECK(join_world({})->size() == 1);
  CHECK(join_world({.world_size = 1, .rank = 0})->name() == "single process");
  CHECK_THROWS_WITH(join_world({.world_size = 4}), Catch::Contains("mpirun -np 4"));
  CHECK_THROWS_WITH(join_world({.rank = 2}), Catch::Contains("--distributed-rank 2"));
  CHECK_THROWS_WITH(join_world({.init_method = "env://"}), Catch::Contains("--distributed-init-method env://: not supported"));
  SingleProcessCommunicator one;
  CHECK_THROWS_WITH(check_world_matches(one, {.world_size = 2}), Catch::Contains("contradicts the launcher"));
}

TEST_CASE("MPI world of 2: sums, broadcasts, barriers", "[mpi-world]") {
  if (launched_by_mpi()) {
    MpiCommunicator world;
    check_collectives(world);
    return;
  }
  const std::optional<std::vector<std::string>> mpirun = attn::test::mpirun_command(2);
  if (!mpirun) {
    attn::test::skip_program("mpirun is not on PATH (Debian: apt-get install openmpi-bin)");
    return;
  }
  std::vector<std::string> command = *mpirun;
  command.insert(command.end(), {std::filesystem::read_symlink("/proc/self/exe").string(), kMpiTag});
  const std::string log = std::filesystem::temp_directory_path() / ("attnlab_mpi_case_" + std::to_string(::getpid()));
  const attn::test::ProgramRun run = attn::test::run_program(command, log, 60);
  std::filesystem::remove(log);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("All tests passed") != std::string::npos);
}
