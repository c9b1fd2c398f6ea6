// The NCCL communicator (dist/nccl_communicator.hpp) on a GPU: one rank whose collectives
// keep device buffers as they are, and, on a machine with two GPUs and mpirun, two ranks
// (one GPU each, the unique id broadcast over MPI) that sum and broadcast. Reports itself
// skipped, with the reason, when built without NCCL or run where there is no GPU.
#include <catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "test_support.hpp"
#include "dist/mpi_communicator.hpp"
#include "dist/single_process_communicator.hpp"

#if ATTNLAB_WITH_NCCL
#include <cuda_runtime.h>

#include "dist/nccl_communicator.hpp"

namespace {

int gpu_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

// `values` copied to the GPU, run through `collective`, copied back.
template <typename T, typename Collective>
std::vector<T> on_device(std::vector<T> values, Collective collective) {
  T* device = nullptr;
  REQUIRE(cudaMalloc(&device, values.size() * sizeof(T)) == cudaSuccess);
  REQUIRE(cudaMemcpy(device, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  collective(device, values.size());
  REQUIRE(cudaMemcpy(values.data(), device, values.size() * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
  cudaFree(device);
  return values;
}

}  // namespace

TEST_CASE("NCCL, one rank: collectives keep device buffers as they are", "[nccl-one]") {
  if (attn::dist::launched_by_mpi()) return;  // inside the ranks of the two-rank case
  if (gpu_count() == 0) {
    attn::test::skip_gpu_program("no GPU (cudaGetDeviceCount found none): the NCCL communicator needs one");
    return;
  }
  attn::dist::SingleProcessCommunicator bootstrap;
  attn::dist::NcclCommunicator nccl(bootstrap, 0);
  CHECK(nccl.size() == 1);
  CHECK(on_device<float>({1.5f, -2.0f}, [&](float* d, size_t n) { nccl.all_reduce_sum(d, n); }) ==
        std::vector<float>{1.5f, -2.0f});
  CHECK(on_device<double>({3.25}, [&](double* d, size_t n) { nccl.all_reduce_sum(d, n); }) == std::vector<double>{3.25});
  CHECK(on_device<float>({7.0f}, [&](float* d, size_t n) { nccl.broadcast(d, n * sizeof(float), 0); }) ==
        std::vector<float>{7.0f});
  nccl.barrier();
}

TEST_CASE("NCCL, two ranks on two GPUs: sums and broadcasts", "[nccl-two]") {
  if (attn::dist::launched_by_mpi()) {
    attn::dist::MpiCommunicator mpi;
    attn::dist::NcclCommunicator nccl(mpi, mpi.rank());
    const float mine = float(mpi.rank() + 1);
    CHECK(on_device<float>({mine, 0.25f}, [&](float* d, size_t n) { nccl.all_reduce_sum(d, n); }) ==
          std::vector<float>{3.0f, 0.5f});
    CHECK(on_device<float>({mine}, [&](float* d, size_t n) { nccl.broadcast(d, n * sizeof(float), 1); }) ==
          std::vector<float>{2.0f});
    nccl.barrier();
    return;
  }
  if (gpu_count() == 0) return;  // the one-rank case reported the program skipped
  const std::optional<std::vector<std::string>> mpirun = attn::test::mpirun_command(2);
  if (gpu_count() < 2 || !mpirun) {
    // Not a skip of the whole program: the one-rank case above has run.
    WARN("two-rank NCCL case not run: it needs 2 GPUs and mpirun (found " << gpu_count() << " GPU(s)"
                                                                           << (mpirun ? "" : ", no mpirun") << ")");
    return;
  }
  std::vector<std::string> command = *mpirun;
  command.insert(command.end(), {std::filesystem::read_symlink("/proc/self/exe").string(), "[nccl-two]"});
  const std::string log = std::filesystem::temp_directory_path() / ("attnlab_nccl_case_" + std::to_string(::getpid()));
  const attn::test::ProgramRun run = attn::test::run_program(command, log, 120);
  std::filesystem::remove(log);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("All tests passed") != std::string::npos);
}

#else

TEST_CASE("NCCL communicator") {
  attn::test::skip_program("built without NCCL (needs the CUDA backend and nccl.h / libnccl in the CUDA toolkit)");
}

#endif
