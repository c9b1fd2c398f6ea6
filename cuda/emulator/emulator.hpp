// A CUDA runtime emulator for tests: runs the kernel bodies of cuda/kernels/ — compiled by
// g++ instead of nvcc — on CPU threads, so every CUDA kernel is checked against the CPU
// backend in the normal test suite on machines without a GPU.
//
// How a launch runs: the blocks of the grid are spread over a few OS threads; within a
// block, each CUDA thread is a fiber (ucontext) with its own stack, and a scheduler runs the
// block's fibers one at a time, each until it reaches a synchronisation point:
// * __syncthreads() is a barrier: no fiber passes it until every thread of the block has
//   reached it (a barrier that only some threads reach, or that some reach while others
//   wait at a shuffle, is reported as an error instead of hanging);
// * __shfl_*_sync exchanges values between the 32 lanes of a warp once all of them have
//   reached the shuffle (full warps only, mask 0xffffffff);
// * atomicAdd/atomicMax are real atomics (std::atomic_ref), as blocks run concurrently.
//
// The warps of a block run one after another, each as far as it can go (through all its
// shuffles) before the next starts; within a warp the lanes run in turn between shuffles.
// Both orders are fixed: ascending or descending warp and lane index (Schedule). These are
// the extreme interleavings a GPU allows, so a kernel missing a __syncthreads — a thread
// reading shared memory another has not written yet, or overwriting what another has not
// read yet — gives a wrong result under at least one of them, deterministically (tests run
// every kernel under both). Shared memory is filled with NaN bytes at the start of every
// block, so reading it before it is written shows up as NaN, not as a plausible stale value.
// Built with -fsanitize=thread, the emulator also tells ThreadSanitizer how the threads are
// ordered, so that it reports the race itself (race_detector.hpp).
//
// Kernels use CUDA's own spellings (threadIdx.x, __syncthreads(), __shfl_xor_sync, ...):
// this header maps them onto the emulator when included through cuda/kernels/device.hpp by
// a host compiler. Only dynamic shared memory is supported, through shared_memory<T>().
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

namespace attn::cuda_emulator {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  unsigned count() const { return x * y * z; }
};

enum class Schedule { Ascending, Descending };

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  size_t shared_bytes = 0;
  Schedule schedule = Schedule::Ascending;
};

constexpr unsigned kWarpSize = 32;
constexpr unsigned kMaxThreadsPerBlock = 1024;

// The schedule of the launches that do not pick one themselves: those of the CUDA backend
// built on the emulated runtime (launch_kernel, cuda/launch_config.cuh). Ascending unless a
// test sets it, to run the backend's kernels under the other extreme too.
Schedule backend_schedule();
void set_backend_schedule(Schedule schedule);

// What runs around every launch: the emulated runtime opens its device memory, which the
// host may not touch, to the kernel's threads and closes it afterwards
// (runtime/device_memory.hpp). Both null (nothing) until the runtime sets them.
struct LaunchGuard {
  void (*open)() = nullptr;
  void (*close)() = nullptr;
};
void set_launch_guard(LaunchGuard guard);

// Runs thread_body once per thread of every block; throws attn::Error on a bad
// configuration, a barrier not every thread reaches, or an exception of a thread.
void launch_body(const LaunchConfig& config, const std::function<void()>& thread_body);

// Runs the __global__ function `kernel` with `args` on every thread, like kernel<<<...>>>(args...).
template <typename... Params, typename... Args>
void launch(const LaunchConfig& config, void (*kernel)(Params...), Args... args) {
  launch_body(config, [&] { kernel(args...); });
}

// What a running kernel sees (valid only inside launch_body's threads).
const Dim3& thread_idx();
const Dim3& block_idx();
const Dim3& block_dim();
const Dim3& grid_dim();
void sync_threads();
void* shared_memory_base();

enum class ShuffleKind { Xor, Down, Up, Index };
// The 8-byte value of lane `source` (chosen per kind from `delta`) after every lane of the warp posted its own.
uint64_t shuffle_bits(ShuffleKind kind, uint64_t bits, int delta);

template <typename T>
T shuffle(ShuffleKind kind, T value, int delta) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "warp shuffles move at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  bits = shuffle_bits(kind, bits, delta);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

// Products never contracted with a neighbouring add (CUDA's __fmul_rn, __dmul_rn): defined
// out of line in emulator.cpp, where the compiler cannot fuse them into an FMA.
float fmul_rn(float a, float b);
double dmul_rn(double a, double b);

}  // namespace attn::cuda_emulator

// --- CUDA's spellings, mapped onto the emulator ---
#define __global__ inline
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__
#define threadIdx (::attn::cuda_emulator::thread_idx())
#define blockIdx (::attn::cuda_emulator::block_idx())
#define blockDim (::attn::cuda_emulator::block_dim())
#define gridDim (::attn::cuda_emulator::grid_dim())
#define __syncthreads() ::attn::cuda_emulator::sync_threads()

template <typename T>
inline T __shfl_xor_sync(unsigned /*mask: full warps only*/, T value, int lane_mask) {
  return ::attn::cuda_emulator::shuffle(::attn::cuda_emulator::ShuffleKind::Xor, value, lane_mask);
}
template <typename T>
inline T __shfl_down_sync(unsigned, T value, unsigned delta) {
  return ::attn::cuda_emulator::shuffle(::attn::cuda_emulator::ShuffleKind::Down, value, int(delta));
}
template <typename T>
inline T __shfl_up_sync(unsigned, T value, unsigned delta) {
  return ::attn::cuda_emulator::shuffle(::attn::cuda_emulator::ShuffleKind::Up, value, int(delta));
}
template <typename T>
inline T __shfl_sync(unsigned, T value, int source_lane) {
  return ::attn::cuda_emulator::shuffle(::attn::cuda_emulator::ShuffleKind::Index, value, source_lane);
}

#define __fmul_rn(a, b) ::attn::cuda_emulator::fmul_rn(a, b)
#define __dmul_rn(a, b) ::attn::cuda_emulator::dmul_rn(a, b)

template <typename T>
inline T atomicAdd(T* address, T value) {
  return std::atomic_ref<T>(*address).fetch_add(value);
}
template <typename T>
inline T atomicMax(T* address, T value) {
  std::atomic_ref<T> ref(*address);
  T old = ref.load();
  while (old < value && !ref.compare_exchange_weak(old, value)) {
  }
  return old;
}
