// The communicators of dist/: a world of one leaves buffers as they are; the MPI world and the
// gloo world (ranks met through --distributed-init-method env://) sum (also with several
// non-blocking all-reduces in flight), broadcast and synchronise. The MPI case runs inside
// `mpirun -np 2` of this very program, the gloo case in two copies of it started with
// torchrun's variables; the outer run checks that every rank passed. Without mpirun on PATH
// the MPI case reports the program skipped. Also: the rendezvous addresses are read, and what
// is missing named; the TCP store answers reads once the key is set, and says when it cannot.
#include <catch.hpp>

#include <unistd.h>

#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "test_support.hpp"
#include "dist/mpi_communicator.hpp"
#include "dist/rendezvous.hpp"
#include "dist/single_process_communicator.hpp"
#include "dist/tcp_store.hpp"
#include "dist/world.hpp"

using namespace attn::dist;

namespace {

constexpr const char* kMpiTag = "[mpi-world]";    // the case mpirun's ranks run
constexpr const char* kGlooTag = "[gloo-world]";  // the case the gloo ranks run
constexpr const char* kGlooRank = "ATTNLAB_TEST_GLOO_RANK";  // set in the gloo ranks

// The checks each rank of the two-rank cases makes.
void check_collectives(Communicator& world, const std::string& name) {
  REQUIRE(world.size() == 2);
  REQUIRE(world.name() == name);
  CHECK(world.local_rank() == world.rank());  // both on this machine
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
  SingleProcessCommunicator one;
  CHECK_THROWS_WITH(check_world_matches(one, {.world_size = 2}), Catch::Contains("contradicts the launcher"));
}

TEST_CASE("MPI world of 2: sums, broadcasts, barriers", "[mpi-world]") {
  if (launched_by_mpi()) {
    MpiCommunicator world;
    check_collectives(world, "MPI");
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

TEST_CASE("gloo world of 2, met through env://: sums, broadcasts, barriers", "[gloo-world]") {
  if (std::getenv(kGlooRank) != nullptr) {
    const std::unique_ptr<Communicator> world = join_world({.init_method = "env://"});
    check_collectives(*world, "gloo");
    return;
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string port = std::to_string(attn::test::free_tcp_port());
  const std::string log = std::filesystem::temp_directory_path() / ("attnlab_gloo_case_" + std::to_string(::getpid()));
  std::vector<attn::test::Program> ranks;
  for (const char* rank : {"0", "1"})
    ranks.push_back({{self, kGlooTag}, log + "." + rank,
                     {{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}, {"WORLD_SIZE", "2"}, {"RANK", rank},
                      {kGlooRank, rank}}});
  const std::vector<attn::test::ProgramRun> runs = attn::test::run_programs(ranks, 60);
  for (const attn::test::ProgramRun& run : runs) {
    INFO(run.output);
    CHECK(run.exit_code == 0);
    CHECK(run.output.find("All tests passed") != std::string::npos);
  }
  for (const attn::test::Program& rank : ranks) std::filesystem::remove(rank.log);
}

TEST_CASE("rendezvous addresses: tcp://, env://, file://, and what is missing is named") {
  const Rendezvous tcp = plan_rendezvous("tcp://node-7:29500", 4, 3);
  CHECK(tcp.over_tcp);
  CHECK(tcp.host == "node-7");
  CHECK(tcp.port == 29500);
  CHECK(tcp.world_size == 4);
  CHECK(tcp.rank == 3);
  const Rendezvous file = plan_rendezvous("file:///shared/job-1", 2, 0);
  CHECK_FALSE(file.over_tcp);
  CHECK(file.directory == "/shared/job-1");
  CHECK_THROWS_WITH(plan_rendezvous("tcp://node-7:29500", 4, std::nullopt),
                    Catch::Contains("needs --distributed-world-size N") && Catch::Contains("--distributed-rank R"));
  CHECK_THROWS_WITH(plan_rendezvous("tcp://node-7:29500", 2, 2), Catch::Contains("--distributed-rank 2 is not below"));
  CHECK_THROWS_WITH(plan_rendezvous("tcp://node-7", 2, 0), Catch::Contains("expected tcp://HOST:PORT"));
  CHECK_THROWS_WITH(plan_rendezvous("tcp://node-7:http", 2, 0), Catch::Contains("the port 'http' is not a number"));
  CHECK_THROWS_WITH(plan_rendezvous("udp://node-7:1", 2, 0), Catch::Contains("not one of tcp://HOST:PORT, env://"));
  CHECK_THROWS_WITH(plan_rendezvous("file://", 2, 0), Catch::Contains("not one of"));

  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"}) ::unsetenv(name);
  CHECK_THROWS_WITH(plan_rendezvous("env://", 2, 0), Catch::Contains("needs MASTER_ADDR and MASTER_PORT"));
  ::setenv("MASTER_ADDR", "node-1", 1);
  ::setenv("MASTER_PORT", "1234", 1);
  CHECK_THROWS_WITH(plan_rendezvous("env://", std::nullopt, std::nullopt), Catch::Contains("or WORLD_SIZE and RANK"));
  ::setenv("WORLD_SIZE", "8", 1);
  ::setenv("RANK", "5", 1);
  const Rendezvous env = plan_rendezvous("env://", std::nullopt, std::nullopt);
  CHECK(env.host == "node-1");
  CHECK(env.port == 1234);
  CHECK(env.world_size == 8);
  CHECK(env.rank == 5);
  CHECK(plan_rendezvous("env://", 8, 5).rank == 5);  // flags that agree
  CHECK_THROWS_WITH(plan_rendezvous("env://", 8, 4), Catch::Contains("--distributed-rank 4 contradicts RANK=5"));
  ::setenv("RANK", "five", 1);
  CHECK_THROWS_WITH(plan_rendezvous("env://", 8, std::nullopt), Catch::Contains("RANK=five is not a number"));
  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"}) ::unsetenv(name);
}

TEST_CASE("TCP store: a read waits for the key; a port taken, no server and a key never set are named") {
  using std::chrono::milliseconds;
  const int port = attn::test::free_tcp_port();
  TcpStore rank_zero("127.0.0.1", port, true, milliseconds(5000));
  CHECK(rank_zero.local_address() == "127.0.0.1");
  // Another rank reads a key that rank 0 sets only later.
  std::future<std::vector<char>> read = std::async(std::launch::async, [&] {
    TcpStore other("127.0.0.1", port, false, milliseconds(5000));
    other.set("from other", {'o'});
    return other.get("late");
  });
  CHECK(rank_zero.get("from other") == std::vector<char>{'o'});
  std::this_thread::sleep_for(milliseconds(50));
  rank_zero.set("late", {'x', '\0', 'y'});
  CHECK(read.get() == std::vector<char>{'x', '\0', 'y'});
  rank_zero.set("empty", {});
  CHECK(rank_zero.get("empty").empty());

  CHECK_THROWS_WITH(rank_zero.wait({"never"}, milliseconds(200)),
                    Catch::Contains("key 'never' was not set within") && Catch::Contains("a rank has not arrived"));
  CHECK_THROWS_WITH(TcpStore("127.0.0.1", port, true, milliseconds(200)), Catch::Contains("rank 0 cannot listen on port"));
  const int nobody = attn::test::free_tcp_port();
  CHECK_THROWS_WITH(TcpStore("127.0.0.1", nobody, false, milliseconds(300)),
                    Catch::Contains("cannot reach rank 0's store") && Catch::Contains("is rank 0 started"));
  CHECK_THROWS_WITH(TcpStore("no-such-host.invalid", nobody, false, milliseconds(300)),
                    Catch::Contains("cannot resolve host 'no-such-host.invalid'"));
}
