// The CUDA emulator itself (cuda/emulator/emulator.hpp): every thread of every block runs
// with its own indices, __syncthreads is a barrier, warp shuffles move the right lanes'
// values, atomics are atomic across concurrently running blocks, a barrier not every thread
// reaches is an error instead of a hang — and a kernel missing a __syncthreads (before a read
// of what another thread wrote, or before overwriting what another has yet to read) gives a
// wrong result, deterministically, while the same kernel with it is right. The detection is
// the emulator's fixed extreme schedules plus NaN-filled shared memory here; race_probe.cpp
// shows ThreadSanitizer finding the same missing barriers as races.
#include <catch.hpp>

#include <numeric>
#include <vector>

#include "cuda/kernels/device.hpp"

using namespace attn;
using namespace attn::cuda_emulator;
using attn::cuda_kernels::kFullWarp;
using attn::cuda_kernels::shared_memory;
using Catch::Matchers::Contains;

namespace {

__global__ void write_global_index(int* out) {
  const unsigned block = blockIdx.x + gridDim.x * blockIdx.y;
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[block * blockDim.x * blockDim.y * blockDim.z + thread] = int(block * 1000 + thread);
}

// out[t] = in[n − 1 − t] through shared memory: each thread reads what another wrote, so it
// is right only if the barrier separates the writes from the reads.
template <bool kSynchronize>
__global__ void reverse_through_shared(const float* in, float* out) {
  float* staged = shared_memory<float>();
  const unsigned t = threadIdx.x, n = blockDim.x;
  staged[t] = in[blockIdx.x * n + t];
  if (kSynchronize) __syncthreads();
  out[blockIdx.x * n + t] = staged[n - 1 - t];
}

// Each warp publishes a value, every thread reads its neighbour warp's, then the warps
// publish again: right only if a barrier keeps the second writes after all the first reads.
template <bool kSynchronize>
__global__ void publish_twice(float* out) {
  float* slot = shared_memory<float>();
  const unsigned warp = threadIdx.x / 32, neighbour = (warp + 1) % (blockDim.x / 32);
  if (threadIdx.x % 32 == 0) slot[warp] = float(warp);
  __syncthreads();
  const float first = slot[neighbour];
  if (kSynchronize) __syncthreads();
  if (threadIdx.x % 32 == 0) slot[warp] = float(10 * warp + 5);
  __syncthreads();
  out[threadIdx.x] = first + 100 * slot[neighbour];
}

__global__ void shuffles(const int* in, int* xor_sum, int* down, int* up, int* broadcast) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int sum = in[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(kFullWarp, sum, offset);
  xor_sum[i] = sum;
  down[i] = __shfl_down_sync(kFullWarp, in[i], 3);
  up[i] = __shfl_up_sync(kFullWarp, in[i], 5);
  broadcast[i] = __shfl_sync(kFullWarp, in[i], 7);
}

__global__ void count_and_sum(int* count, double* sum) {
  atomicAdd(count, 1);
  atomicAdd(sum, 0.5);
}

__global__ void barrier_in_branch(int* out) {
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void shuffle_in_partial_warp(int* out) { out[threadIdx.x] = __shfl_xor_sync(kFullWarp, 1, 1); }

std::vector<float> iota_floats(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 1.0f);
  return v;
}

}  // namespace

TEST_CASE("every thread of every block runs once with its own indices", "[cuda_emulator]") {
  const LaunchConfig config{.grid = {3, 2}, .block = {4, 2, 2}};
  std::vector<int> out(6 * 16, -1);
  launch(config, write_global_index, out.data());
  for (unsigned block = 0; block < 6; ++block)
    for (unsigned thread = 0; thread < 16; ++thread) CHECK(out[block * 16 + thread] == int(block * 1000 + thread));
}

TEST_CASE("__syncthreads separates the writes to shared memory from the reads", "[cuda_emulator]") {
  const unsigned threads = 64, blocks = 3;
  const std::vector<float> in = iota_floats(threads * blocks);
  std::vector<float> expected(in.size());
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) expected[b * threads + t] = in[b * threads + threads - 1 - t];
  for (Schedule schedule : {Schedule::Ascending, Schedule::Descending}) {
    const LaunchConfig config{.grid = {blocks}, .block = {threads}, .shared_bytes = threads * sizeof(float),
                              .schedule = schedule};
    std::vector<float> out(in.size(), 0.0f);
    launch(config, reverse_through_shared<true>, in.data(), out.data());
    CHECK(out == expected);
  }
}

TEST_CASE("a missing __syncthreads is detected: the kernel's result is wrong under either schedule",
          "[cuda_emulator]") {
  // Deterministic, not a sanitizer: the fibers of a block run in a fixed order between
  // synchronisation points, and shared memory starts as NaN, so without the barrier the
  // threads that run first read slots nobody has written yet.
  const unsigned threads = 64;
  const std::vector<float> in = iota_floats(threads);
  for (Schedule schedule : {Schedule::Ascending, Schedule::Descending}) {
    const LaunchConfig config{.grid = {1}, .block = {threads}, .shared_bytes = threads * sizeof(float),
                              .schedule = schedule};
    std::vector<float> with_barrier(threads), without_barrier(threads);
    launch(config, reverse_through_shared<true>, in.data(), with_barrier.data());
    launch(config, reverse_through_shared<false>, in.data(), without_barrier.data());
    CHECK(with_barrier != without_barrier);
    const auto unwritten =
        std::count_if(without_barrier.begin(), without_barrier.end(), [](float v) { return v != v; });
    CHECK(unwritten == threads / 2);  // half the threads ran before their partner wrote
  }
}

TEST_CASE("a missing __syncthreads before shared memory is rewritten is detected too", "[cuda_emulator]") {
  // Warps run one after another as far as they can, so without the barrier the first warp
  // to run rewrites its slot before the other warp has read the old value.
  const unsigned threads = 64;
  std::vector<float> expected(threads);
  for (unsigned t = 0; t < threads; ++t) {
    const unsigned neighbour = (t / 32 + 1) % 2;
    expected[t] = float(neighbour) + 100.0f * float(10 * neighbour + 5);
  }
  for (Schedule schedule : {Schedule::Ascending, Schedule::Descending}) {
    const LaunchConfig config{.grid = {1}, .block = {threads}, .shared_bytes = 2 * sizeof(float),
                              .schedule = schedule};
    std::vector<float> with_barrier(threads), without_barrier(threads);
    launch(config, publish_twice<true>, with_barrier.data());
    launch(config, publish_twice<false>, without_barrier.data());
    CHECK(with_barrier == expected);
    CHECK(without_barrier != expected);
  }
}

TEST_CASE("warp shuffles exchange the values of the right lanes", "[cuda_emulator]") {
  const unsigned n = 128;  // two blocks of two warps
  std::vector<int> in(n);
  for (unsigned i = 0; i < n; ++i) in[i] = int(i * i % 97);
  std::vector<int> xor_sum(n), down(n), up(n), broadcast(n);
  launch(LaunchConfig{.grid = {2}, .block = {64}}, shuffles, in.data(), xor_sum.data(), down.data(), up.data(),
         broadcast.data());
  for (unsigned i = 0; i < n; ++i) {
    const unsigned warp = i / 32 * 32, lane = i % 32;
    CHECK(xor_sum[i] == std::accumulate(in.begin() + warp, in.begin() + warp + 32, 0));
    CHECK(down[i] == in[lane + 3 < 32 ? i + 3 : i]);  // lanes past the warp's end keep their own value
    CHECK(up[i] == in[lane >= 5 ? i - 5 : i]);
    CHECK(broadcast[i] == in[warp + 7]);
  }
}

TEST_CASE("atomics count every thread of blocks running concurrently", "[cuda_emulator]") {
  int count = 0;
  double sum = 0.0;
  launch(LaunchConfig{.grid = {16}, .block = {96}}, count_and_sum, &count, &sum);
  CHECK(count == 16 * 96);
  CHECK(sum == 0.5 * 16 * 96);
}

TEST_CASE("a barrier or shuffle not every thread can reach is an error, not a hang", "[cuda_emulator]") {
  std::vector<int> out(64);
  CHECK_THROWS_WITH(launch(LaunchConfig{.grid = {1}, .block = {32}}, barrier_in_branch, out.data()),
                    Contains("16 of 32 threads wait at __syncthreads") && Contains("16 have returned"));
  CHECK_THROWS_WITH(launch(LaunchConfig{.grid = {1}, .block = {48}}, shuffle_in_partial_warp, out.data()),
                    Contains("warp shuffles need whole warps; the block has 48 threads"));
  CHECK_THROWS_WITH(launch(LaunchConfig{.grid = {1}, .block = {2048}}, barrier_in_branch, out.data()),
                    Contains("2048 threads per block, at most 1024"));
}
