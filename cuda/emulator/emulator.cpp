// The CUDA emulator's scheduler (cuda/emulator/emulator.hpp): blocks on OS threads, the
// threads of a block as fibers switched at __syncthreads and warp shuffles.
//
// A switch is Boost.Context's jump_fcontext (its low-level layer, under its fiber and
// continuation classes, used directly because a fiber abandoned after a failed block must be
// dropped without unwinding): it saves the callee-saved registers and swaps stacks, nothing
// more. glibc's swapcontext also saves and restores the signal mask, a system call per
// switch, and every CUDA thread of every block switches at least twice:
// with it the emulated-device tests spent four fifths of their time switching. With these
// switches and the stacks kept between launches (StackPool), on a 2-core AMD EPYC (Zen 5):
// apps_on_emulated_cuda/test_training_on_device 199 -> 4.3 s, test_variants_on_device 222 ->
// 9.4 s, the whole suite at -j2 365 -> 90 s.
#include "cuda/emulator/emulator.hpp"

#include <boost/context/detail/fcontext.hpp>

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "cuda/emulator/race_detector.hpp"

namespace attn::cuda_emulator {
namespace {

// Under ThreadSanitizer every instrumented call needs more stack; untouched pages stay unmapped either way.
constexpr size_t kFiberStackBytes = (race_detector::kEnabled ? 256 : 64) * 1024;
constexpr unsigned kWorkers = 2;  // OS threads running blocks; two already expose races between blocks

// Fiber stacks, kept from one launch to the next: allocating (and first touching) a stack per
// CUDA thread at every launch cost the emulated-device tests a third of their time once the
// switches were cheap. Untouched pages stay unmapped; the pool holds at most the stacks of
// the largest launch (kWorkers blocks of up to kMaxThreadsPerBlock threads).
class StackPool {
 public:
  std::unique_ptr<char[]> take() {
    const std::lock_guard lock(mutex_);
    if (free_.empty()) return std::make_unique_for_overwrite<char[]>(kFiberStackBytes);
    std::unique_ptr<char[]> stack = std::move(free_.back());
    free_.pop_back();
    return stack;
  }
  void give_back(std::unique_ptr<char[]> stack) {
    const std::lock_guard lock(mutex_);
    free_.push_back(std::move(stack));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<char[]>> free_;
};

StackPool& stack_pool() {
  static StackPool pool;
  return pool;
}

enum class FiberState { Runnable, AtBarrier, AtShuffle, Done };

// A value the scheduler and a fiber both touch: relaxed atomics, so that ThreadSanitizer sees
// neither a race nor an order between fibers in the emulator's bookkeeping (race_detector.hpp).
template <typename T>
class Relaxed {
 public:
  explicit Relaxed(T value = T{}) : value_(value) {}
  T get() const { return value_.load(std::memory_order_relaxed); }
  void set(T value) { value_.store(value, std::memory_order_relaxed); }

 private:
  std::atomic<T> value_;
};

namespace fcontext = boost::context::detail;

struct Fiber {
  // Where the fiber goes on when next switched to: read by the switch into the fiber (on
  // ThreadSanitizer's books, by the fiber), renewed by the scheduler when the fiber parks.
  Relaxed<fcontext::fcontext_t> context{nullptr};
  std::unique_ptr<char[]> stack;
  Relaxed<FiberState> state{FiberState::Runnable};
  Dim3 thread;
  unsigned linear = 0;           // index within the block
  unsigned barriers_passed = 0;  // in this block; the fiber's own
  bool started = false;          // in this block; the scheduler's
  Relaxed<ShuffleKind> shuffle_kind{ShuffleKind::Xor};
  Relaxed<uint64_t> shuffle_value{0};
  Relaxed<int> shuffle_delta{0};
  void* race_context = race_detector::create_context();

  Fiber() = default;
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;
  ~Fiber() {
    race_detector::destroy_context(race_context);
    if (stack) stack_pool().give_back(std::move(stack));
  }
};

// One block in flight on one OS thread.
struct Block {
  const LaunchConfig* config = nullptr;
  const std::function<void()>* body = nullptr;
  Dim3 index;
  std::vector<Fiber> fibers;
  std::vector<unsigned char> shared;
  // Where the scheduler goes on; renewed by every switch into a fiber, read by the next fiber.
  Relaxed<fcontext::fcontext_t> scheduler{nullptr};
  void* scheduler_race_context = race_detector::current_context();
  Relaxed<Fiber*> current{nullptr};
  std::exception_ptr error;  // a thread's: published by release(&error), then `failed`
  Relaxed<bool> failed{false};
  // ThreadSanitizer's sync objects (race_detector.hpp): the block's end, barrier generations.
  char finish_sync = 0, barrier_sync[2] = {};
};

thread_local Block* tls_block = nullptr;

Block& running_block() {
  ATTN_CHECK(tls_block != nullptr && tls_block->current.get() != nullptr,
             "CUDA emulator: a device function was called outside an emulated launch");
  return *tls_block;
}

// Parks the running fiber in `state` and switches back to the scheduler; `sync`, when given,
// is released last, after everything this thread did (race_detector.hpp).
void park(Block& block, Fiber& fiber, FiberState state, void* sync = nullptr) {
  fiber.state.set(state);
  if (sync) race_detector::release(sync);
  race_detector::switch_to(block.scheduler_race_context);
  block.scheduler.set(fcontext::jump_fcontext(block.scheduler.get(), nullptr).fctx);
}

void yield(FiberState state) {
  Block& block = running_block();
  park(block, *block.current.get(), state);
}

// A fiber's whole life: the thread body once per block of its OS thread, parked as Done in
// between. It never returns (there is nothing to return to, and ThreadSanitizer's record of
// the fiber's calls would be left unbalanced); fibers still parked when the launch ends are
// dropped with their stacks. `from` is the scheduler that switched to it the first time.
[[noreturn]] void fiber_main(fcontext::transfer_t from) {
  tls_block->scheduler.set(from.fctx);
  while (true) {
    Block& block = running_block();
    Fiber& fiber = *block.current.get();
    try {
      (*block.body)();
    } catch (...) {
      block.error = std::current_exception();  // the first: the scheduler stops the block at once
      race_detector::release(&block.error);
      block.failed.set(true);
    }
    park(block, fiber, FiberState::Done, &block.finish_sync);
  }
}

// Whether a thread of the block threw (then its exception is block.error).
bool block_failed(Block& block) {
  if (!block.failed.get()) return false;
  race_detector::acquire(&block.error);
  return true;
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
      std::all_of(lanes, lanes + kWarpSize, [](const Fiber& f) { return f.state.get() == FiberState::AtShuffle; });
  if (!all_waiting) return false;
  uint64_t values[kWarpSize];
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    ATTN_CHECK(lanes[lane].shuffle_kind.get() == lanes[0].shuffle_kind.get(),
               "CUDA emulator: the lanes of warp {} of block ({}, {}, {}) are in different kinds of shuffle",
               first / kWarpSize, block.index.x, block.index.y, block.index.z);
    values[lane] = lanes[lane].shuffle_value.get();
  }
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const unsigned source = shuffle_source(lanes[lane].shuffle_kind.get(), lane, lanes[lane].shuffle_delta.get());
    lanes[lane].shuffle_value.set(values[source]);
    lanes[lane].state.set(FiberState::Runnable);
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
      if (fiber.state.get() != FiberState::Runnable) continue;
      block.current.set(&fiber);
      const bool first_run = !fiber.started;
      fiber.started = true;
      if (first_run) {
        race_detector::switch_to_ordered(fiber.race_context);  // the block's set-up happens before it
      } else {
        race_detector::switch_to(fiber.race_context);
      }
      fiber.context.set(fcontext::jump_fcontext(fiber.context.get(), nullptr).fctx);
      block.current.set(nullptr);
      ran = true;
      if (block_failed(block)) return ran;  // the other fibers are abandoned with their stacks
    }
  } while (end - first == kWarpSize && resolve_shuffle(block, first));
  return ran;
}

// Why no fiber can go on: some wait at a barrier or shuffle that the others never reach.
[[noreturn]] void report_deadlock(const Block& block) {
  size_t at_barrier = 0, at_shuffle = 0, done = 0;
  for (const Fiber& f : block.fibers) {
    at_barrier += f.state.get() == FiberState::AtBarrier;
    at_shuffle += f.state.get() == FiberState::AtShuffle;
    done += f.state.get() == FiberState::Done;
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
    fiber.state.set(FiberState::Runnable);
    fiber.barriers_passed = 0;
    fiber.started = false;
  }
  const size_t n = block.fibers.size(), warps = (n + kWarpSize - 1) / kWarpSize;
  const bool ascending = config.schedule == Schedule::Ascending;
  while (true) {
    bool ran = false;
    for (size_t w = 0; w < warps; ++w) {
      const size_t first = (ascending ? w : warps - 1 - w) * kWarpSize;
      ran = run_warp(block, first, std::min(first + kWarpSize, n)) || ran;
      if (block.failed.get()) return;
    }
    const bool all_done = std::all_of(block.fibers.begin(), block.fibers.end(),
                                      [](const Fiber& f) { return f.state.get() == FiberState::Done; });
    if (all_done) {
      race_detector::acquire(&block.finish_sync);  // every thread happens before what follows the block
      return;
    }
    const bool all_at_barrier = std::all_of(block.fibers.begin(), block.fibers.end(),
                                            [](const Fiber& f) { return f.state.get() == FiberState::AtBarrier; });
    if (all_at_barrier) {
      for (Fiber& f : block.fibers) f.state.set(FiberState::Runnable);
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
  block.fibers = std::vector<Fiber>(config.block.count());
  for (unsigned t = 0; t < block.fibers.size(); ++t) {
    Fiber& fiber = block.fibers[t];
    fiber.stack = stack_pool().take();
    fiber.linear = t;
    fiber.thread = unflatten(t, config.block);
    fiber.context.set(fcontext::make_fcontext(fiber.stack.get() + kFiberStackBytes, kFiberStackBytes, fiber_main));
  }
  tls_block = &block;
  try {
    for (unsigned b = worker; b < config.grid.count() && !block.failed.get(); b += kWorkers) {
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
LaunchGuard launch_guard;  // set once, by the emulated runtime, before its first launch
}  // namespace

Schedule backend_schedule() { return backend_schedule_setting.load(); }
void set_backend_schedule(Schedule schedule) { backend_schedule_setting.store(schedule); }

void set_launch_guard(LaunchGuard guard) { launch_guard = guard; }

void launch_body(const LaunchConfig& config, const std::function<void()>& thread_body) {
  check_config(config);
  struct Guarded {
    Guarded() { if (launch_guard.open) launch_guard.open(); }
    ~Guarded() { if (launch_guard.close) launch_guard.close(); }
  } guarded;
  const unsigned workers = std::min(kWorkers, config.grid.count());
  std::vector<std::exception_ptr> errors(workers);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w)
    threads.emplace_back(run_worker, std::cref(config), std::cref(thread_body), w, std::ref(errors[w]));
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

const Dim3& thread_idx() { return running_block().current.get()->thread; }
const Dim3& block_idx() { return running_block().index; }
const Dim3& block_dim() { return running_block().config->block; }
const Dim3& grid_dim() { return running_block().config->grid; }
void* shared_memory_base() { return running_block().shared.data(); }

void sync_threads() {
  Block& block = running_block();
  Fiber& fiber = *block.current.get();
  char* barrier = &block.barrier_sync[fiber.barriers_passed++ % 2];
  race_detector::release(barrier);  // what this thread did before the barrier ...
  yield(FiberState::AtBarrier);
  race_detector::acquire(barrier);  // ... happens before what every thread does after it
}

float fmul_rn(float a, float b) { return a * b; }
double dmul_rn(double a, double b) { return a * b; }

uint64_t shuffle_bits(ShuffleKind kind, uint64_t bits, int delta) {
  Block& block = running_block();
  ATTN_CHECK(block.fibers.size() % kWarpSize == 0,
             "CUDA emulator: warp shuffles need whole warps; the block has {} threads", block.fibers.size());
  Fiber& fiber = *block.current.get();
  fiber.shuffle_kind.set(kind);
  fiber.shuffle_value.set(bits);
  fiber.shuffle_delta.set(delta);
  yield(FiberState::AtShuffle);
  return fiber.shuffle_value.get();
}

}  // namespace attn::cuda_emulator
