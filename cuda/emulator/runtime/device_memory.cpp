// The emulated runtime's device memory (cuda/emulator/runtime/device_memory.hpp): a first-fit
// allocator over one reserved arena whose pages the host may touch only inside DeviceAccess.
#include "cuda/emulator/runtime/device_memory.hpp"

#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "cuda/emulator/emulator.hpp"

namespace attn::cuda_emulator::runtime {
namespace {

constexpr size_t kAlignment = 256;  // cudaMalloc's guarantee
// Address space only (pages are backed when first written); less where a limit refuses it.
constexpr size_t kLargestArena = size_t(64) << 30, kSmallestArena = size_t(1) << 30;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
size_t page_size() { return size_t(sysconf(_SC_PAGESIZE)); }
// The arena bytes an allocation of `bytes` takes: whole alignment units, at least one.
size_t taken_bytes(size_t bytes) { return std::max(round_up(bytes, kAlignment), kAlignment); }

struct Arena {
  std::mutex mutex;
  char* base = nullptr;
  size_t reserved = 0;                 // bytes of address space from base
  size_t used = 0;                     // bytes from base that allocations have ever reached
  size_t open_bytes = 0;               // bytes from base that are readable and writable now
  int access_depth = 0;                // live DeviceAccess objects, all threads
  std::map<size_t, size_t> free;       // offset → bytes of every free block below `used`
  std::map<uintptr_t, size_t> sizes;   // start address → bytes asked for, of every live allocation
  struct sigaction previous_handler {};
};

Arena& arena();

// Reports a fault inside the arena as the host touching device memory; any other fault goes
// to the handler that was there before.
void on_segmentation_fault(int signal, siginfo_t* info, void* context) {
  Arena& a = arena();
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  const auto base = reinterpret_cast<uintptr_t>(a.base);
  if (address < base || address >= base + a.reserved) {
    if (a.previous_handler.sa_flags & SA_SIGINFO) return a.previous_handler.sa_sigaction(signal, info, context);
    sigaction(SIGSEGV, &a.previous_handler, nullptr);  // SIG_DFL or a plain handler: the fault repeats into it
    return;
  }
  char text[512];
  int length = std::snprintf(text, sizeof(text),
                             "emulated CUDA runtime: host code touched device memory at %p, outside any CUDA call "
                             "(on a GPU: a segmentation fault or garbage). Copy the tensor to the host first.\n",
                             info->si_addr);
  if (a.mutex.try_lock()) {
    auto after = a.sizes.upper_bound(address);
    if (after != a.sizes.begin()) {
      const auto& [start, bytes] = *std::prev(after);
      if (address < start + taken_bytes(bytes))
        length += std::snprintf(text + length, sizeof(text) - size_t(length),
                                "  it lies %zu bytes into the allocation at %p of %zu bytes\n", size_t(address - start),
                                reinterpret_cast<void*>(start), bytes);
    }
    a.mutex.unlock();
  }
  (void)!write(STDERR_FILENO, text, size_t(length));
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  sigaction(SIGSEGV, &a.previous_handler, nullptr);  // the fault repeats into it (a test framework names the test)
}

// Makes on_segmentation_fault SIGSEGV's handler again, keeping the one it replaces: called
// whenever device memory closes, since a test framework may have put its own in between.
void install_fault_handler(Arena& a) {
  struct sigaction action {}, replaced {};
  action.sa_sigaction = on_segmentation_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &replaced);
  if (!(replaced.sa_flags & SA_SIGINFO) || replaced.sa_sigaction != on_segmentation_fault) a.previous_handler = replaced;
}

void set_protection(char* first, size_t bytes, int protection) {
  if (bytes > 0 && mprotect(first, bytes, protection) != 0) {
    std::perror("emulated CUDA runtime: mprotect of device memory");
    std::abort();
  }
}

// Makes the pages up to `used` that are not open yet readable and writable. Lock held.
void open_to_used(Arena& a) {
  const size_t end = round_up(a.used, page_size());
  if (end > a.open_bytes) set_protection(a.base + a.open_bytes, end - a.open_bytes, PROT_READ | PROT_WRITE);
  a.open_bytes = std::max(a.open_bytes, end);
}

void open_device_memory();
void close_device_memory();

Arena& arena() {
  static Arena* instance = [] {
    auto* a = new Arena;  // never destroyed: allocations may be freed during exit
    auto reserve = [](size_t bytes) {
      return mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    };
    a->reserved = kLargestArena;
    void* base = reserve(a->reserved);
    while (base == MAP_FAILED && a->reserved > kSmallestArena) base = reserve(a->reserved /= 2);
    if (base == MAP_FAILED) {
      std::perror("emulated CUDA runtime: reserving device memory");
      std::abort();
    }
    a->base = static_cast<char*>(base);
    void* warm_up[1];
    backtrace(warm_up, 1);  // loads what backtrace needs now, not inside the signal handler
    set_launch_guard({open_device_memory, close_device_memory});
    return a;
  }();
  return *instance;
}

void open_device_memory() {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  if (a.access_depth++ == 0) open_to_used(a);
}

void close_device_memory() {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  if (--a.access_depth == 0) {
    set_protection(a.base, a.open_bytes, PROT_NONE);
    a.open_bytes = 0;
    install_fault_handler(a);
  }
}

// The offset of a free range of `bytes` (first fit, else past `used`), or none. Lock held.
bool take_block(Arena& a, size_t bytes, size_t& offset) {
  for (auto it = a.free.begin(); it != a.free.end(); ++it) {
    if (it->second < bytes) continue;
    offset = it->first;
    if (it->second > bytes) a.free[it->first + bytes] = it->second - bytes;
    a.free.erase(it);
    return true;
  }
  if (a.used + bytes > a.reserved) return false;
  offset = a.used;
  a.used += bytes;
  if (a.access_depth > 0) open_to_used(a);  // allocated while open: the new pages are open too
  return true;
}

// Returns [offset, offset + bytes) to the free list, merged with its free neighbours. Lock held.
void give_back_block(Arena& a, size_t offset, size_t bytes) {
  auto next = a.free.lower_bound(offset);
  if (next != a.free.end() && next->first == offset + bytes) {
    bytes += next->second;
    next = a.free.erase(next);
  }
  if (next != a.free.begin()) {
    auto before = std::prev(next);
    if (before->first + before->second == offset) {
      before->second += bytes;
      return;
    }
  }
  a.free[offset] = bytes;
}

}  // namespace

DeviceAccess::DeviceAccess() { open_device_memory(); }
DeviceAccess::~DeviceAccess() { close_device_memory(); }

void* allocate_device(size_t bytes) {
  Arena& a = arena();
  const size_t rounded = taken_bytes(bytes);
  char* ptr = nullptr;
  {
    const std::lock_guard lock(a.mutex);
    size_t offset = 0;
    if (!take_block(a, rounded, offset)) return nullptr;
    ptr = a.base + offset;
    a.sizes[reinterpret_cast<uintptr_t>(ptr)] = bytes;
  }
  const DeviceAccess access;
  std::memset(ptr, 0xff, rounded);  // NaN as floats: reading what nobody wrote shows up
  return ptr;
}

bool free_device(void* ptr) {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  const auto start = reinterpret_cast<uintptr_t>(ptr);
  const auto allocation = a.sizes.find(start);
  if (allocation == a.sizes.end()) return false;
  give_back_block(a, size_t(static_cast<char*>(ptr) - a.base), taken_bytes(allocation->second));
  a.sizes.erase(allocation);
  return true;
}

MemoryKind classify(const void* ptr, size_t bytes) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  auto after = a.sizes.upper_bound(address);
  if (after == a.sizes.begin()) return MemoryKind::Host;
  const auto& [start, size] = *std::prev(after);
  // A zero-byte allocation still owns its start address.
  if (address >= start + std::max<size_t>(size, 1)) return MemoryKind::Host;
  return address + bytes <= start + size ? MemoryKind::Device : MemoryKind::Invalid;
}

}  // namespace attn::cuda_emulator::runtime
