// The CUDA emulator's scheduler (cuda/emulator/emulator.hpp): blocks on OS threads, the
// threads of a block as fibers switched at __syncthreads and warp shuffles.
#include "cuda/emulator/emulator.hpp"

#include <ucontext.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace attn::cuda_emulator {
namespace {

constexpr size_t kFiberStackBytes = 64 * 1024;
constexpr unsigned kWorkers = 2;  // OS threads running blocks; two already expose races between blocks

enum class FiberState { Runnable, AtBarrier, AtShuffle, Done };

struct Fiber {
  ucontext_t context{};
  std::unique_ptr<char[]> stack;
  FiberState state = FiberState::Runnable;
  Dim3 thread;
  unsigned linear = 0;  // index within the block
  ShuffleKind shuffle_kind = ShuffleKind::Xor;
  uint64_t shuffle_value = 0;
  int shuffle_delta = 0;
};

// One block in flight on one OS thread.
struct Block {
  const LaunchConfig* config = nullptr;
  const std::function<void()>* body = nullptr;
  Dim3 index;
  std::vector<Fiber> fibers;
  std::vector<unsigned char> shared;
  ucontext_t scheduler{};
  Fiber* current = nullptr;
  std::exception_ptr error;
};

thread_local Block* tls_block = nullptr;

Block& running_block() {
  ATTN_CHECK(tls_block != nullptr && tls_block->current != nullptr,
             "CUDA emulator: a device function was called outside an emulated launch");
  return *tls_block;
}

// Parks the running fiber in `state` and switches back to the scheduler.
void yield(FiberState state) {
  Block& block = running_block();
  Fiber& fiber = *block.current;
  fiber.state = state;
  swapcontext(&fiber.context, &block.scheduler);
}

void fiber_entry() {
  Block& block = *tls_block;
  try {
    (*block.body)();
  } catch (...) {
    if (!block.error) block.error = std::current_exception();
  }
  block.current->state = FiberState::Done;
  // uc_link returns to the scheduler.
}

Dim3 unflatten(unsigned linear, const Dim3& extent) {
  return {linear % extent.x, (linear / extent.x) % extent.y, linear / (extent.x * extent.y)};
}

// The lane whose value `lane` receives, or `lane` itself when the source lies outside the warp.
unsigned shuffle_source(ShuffleKind kind, unsigned lane, int delta) {
  long source = lane;
  switch (kind) {
    case ShuffleKind::Xor: source = long(lane ^ unsigned(delta)); break;
    case ShuffleKind::Down: source = long(lane) + delta; break;
    case ShuffleKind::Up: source = long(lane) - delta; break;
    case ShuffleKind::Index: source = delta; break;
  }
  return source >= 0 && source < long(kWarpSize) ? unsigned(source) : lane;
}

// Completes the shuffle of the warp of lanes [first, first + kWarpSize) when all of them are
// waiting in one; true when it did.
bool resolve_shuffle(Block& block, size_t first) {
  Fiber* lanes = &block.fibers[first];
  const bool all_waiting =
      std::all_of(lanes, lanes + kWarpSize, [](const Fiber& f) { return f.state == FiberState::AtShuffle; });
  if (!all_waiting) return false;
  uint64_t values[kWarpSize];
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    ATTN_CHECK(lanes[lane].shuffle_kind == lanes[0].shuffle_kind,
               "CUDA emulator: the lanes of warp {} of block ({}, {}, {}) are in different kinds of shuffle",
               first / kWarpSize, block.index.x, block.index.y, block.index.z);
    values[lane] = lanes[lane].shuffle_value;
  }
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    lanes[lane].shuffle_value = values[shuffle_source(lanes[lane].shuffle_kind, lane, lanes[lane].shuffle_delta)];
    lanes[lane].state = FiberState::Runnable;
  }
  return true;
}

// Runs the lanes [first, end) of one warp, in schedule order, through every shuffle until
// each waits at __syncthreads or has returned; true when any lane ran.
bool run_warp(Block& block, size_t first, size_t end) {
  const bool ascending = block.config->schedule == Schedule::Ascending;
  bool ran = false;
  do {
    for (size_t step = first; step < end; ++step) {
      Fiber& fiber = block.fibers[ascending ? step : first + end - 1 - step];
      if (fiber.state != FiberState::Runnable) continue;
      block.current = &fiber;
      swapcontext(&block.scheduler, &fiber.context);
      block.current = nullptr;
      ran = true;
      if (block.error) return ran;  // the other fibers are abandoned with their stacks
    }
  } while (end - first == kWarpSize && resolve_shuffle(block, first));
  return ran;
}

// Why no fiber can go on: some wait at a barrier or shuffle that the others never reach.
[[noreturn]] void report_deadlock(const Block& block) {
  size_t at_barrier = 0, at_shuffle = 0, done = 0;
  for (const Fiber& f : block.fibers) {
    at_barrier += f.state == FiberState::AtBarrier;
    at_shuffle += f.state == FiberState::AtShuffle;
    done += f.state == FiberState::Done;
  }
  throw Error(fmt::format(
      "CUDA emulator: block ({}, {}, {}) cannot go on: {} of {} threads wait at __syncthreads, {} at a warp shuffle "
      "and {} have returned (a barrier or shuffle inside a branch not every thread takes)",
      block.index.x, block.index.y, block.index.z, at_barrier, block.fibers.size(), at_shuffle, done));
}

void run_block(Block& block) {
  const LaunchConfig& config = *block.config;
  std::fill(block.shared.begin(), block.shared.end(), 0xFF);  // NaN in every float: unwritten reads show
  for (Fiber& fiber : block.fibers) {
    fiber.state = FiberState::Runnable;
    getcontext(&fiber.context);
    fiber.context.uc_stack.ss_sp = fiber.stack.get();
    fiber.context.uc_stack.ss_size = kFiberStackBytes;
    fiber.context.uc_link = &block.scheduler;
    makecontext(&fiber.context, fiber_entry, 0);
  }
  const size_t n = block.fibers.size(), warps = (n + kWarpSize - 1) / kWarpSize;
  const bool ascending = config.schedule == Schedule::Ascending;
  while (true) {
    bool ran = false;
    for (size_t w = 0; w < warps; ++w) {
      const size_t first = (ascending ? w : warps - 1 - w) * kWarpSize;
      ran = run_warp(block, first, std::min(first + kWarpSize, n)) || ran;
      if (block.error) return;
    }
    const bool all_done = std::all_of(block.fibers.begin(), block.fibers.end(),
                                      [](const Fiber& f) { return f.state == FiberState::Done; });
    if (all_done) return;
    const bool all_at_barrier = std::all_of(block.fibers.begin(), block.fibers.end(),
                                            [](const Fiber& f) { return f.state == FiberState::AtBarrier; });
    if (all_at_barrier) {
      for (Fiber& f : block.fibers) f.state = FiberState::Runnable;
      continue;
    }
    if (!ran) report_deadlock(block);
  }
}

void check_config(const LaunchConfig& config) {
  const unsigned threads = config.block.count();
  ATTN_CHECK(config.grid.count() > 0 && threads > 0, "CUDA emulator: empty launch (grid {} blocks, block {} threads)",
             config.grid.count(), threads);
  ATTN_CHECK(threads <= kMaxThreadsPerBlock, "CUDA emulator: {} threads per block, at most {}", threads,
             kMaxThreadsPerBlock);
}

// Runs the blocks numbered worker, worker + kWorkers, ... of the grid on this OS thread.
void run_worker(const LaunchConfig& config, const std::function<void()>& body, unsigned worker,
                std::exception_ptr& error) {
  Block block;
  block.config = &config;
  block.body = &body;
  block.shared.resize(config.shared_bytes);
  block.fibers.resize(config.block.count());
  for (unsigned t = 0; t < block.fibers.size(); ++t) {
    block.fibers[t].stack = std::make_unique_for_overwrite<char[]>(kFiberStackBytes);  // untouched pages stay unmapped
    block.fibers[t].linear = t;
    block.fibers[t].thread = unflatten(t, config.block);
  }
  tls_block = &block;
  try {
    for (unsigned b = worker; b < config.grid.count() && !block.error; b += kWorkers) {
      block.index = unflatten(b, config.grid);
      run_block(block);
    }
  } catch (...) {
    block.error = std::current_exception();
  }
  tls_block = nullptr;
  error = block.error;
}

}  // namespace

namespace {
std::atomic<Schedule> backend_schedule_setting{Schedule::Ascending};
}  // namespace

Schedule backend_schedule() { return backend_schedule_setting.load(); }
void set_backend_schedule(Schedule schedule) { backend_schedule_setting.store(schedule); }

void launch_body(const LaunchConfig& config, const std::function<void()>& thread_body) {
  check_config(config);
  const unsigned workers = std::min(kWorkers, config.grid.count());
  std::vector<std::exception_ptr> errors(workers);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w)
    threads.emplace_back(run_worker, std::cref(config), std::cref(thread_body), w, std::ref(errors[w]));
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

const Dim3& thread_idx() { return running_block().current->thread; }
const Dim3& block_idx() { return running_block().index; }
const Dim3& block_dim() { return running_block().config->block; }
const Dim3& grid_dim() { return running_block().config->grid; }
void* shared_memory_base() { return running_block().shared.data(); }

void sync_threads() { yield(FiberState::AtBarrier); }

float fmul_rn(float a, float b) { return a * b; }
double dmul_rn(double a, double b) { return a * b; }

uint64_t shuffle_bits(ShuffleKind kind, uint64_t bits, int delta) {
  Block& block = running_block();
  ATTN_CHECK(block.fibers.size() % kWarpSize == 0,
             "CUDA emulator: warp shuffles need whole warps; the block has {} threads", block.fibers.size());
  Fiber& fiber = *block.current;
  fiber.shuffle_kind = kind;
  fiber.shuffle_value = bits;
  fiber.shuffle_delta = delta;
  yield(FiberState::AtShuffle);
  return fiber.shuffle_value;
}

}  // namespace attn::cuda_emulator
