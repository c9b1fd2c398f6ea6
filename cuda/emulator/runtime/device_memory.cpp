// The emulated runtime's device memory (cuda/emulator/runtime/device_memory.hpp).
#include "cuda/emulator/runtime/device_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

namespace attn::cuda_emulator::runtime {
namespace {

constexpr size_t kAlignment = 256;  // cudaMalloc's guarantee

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, size_t> sizes;  // start address → bytes of every live allocation
};

Registry& registry() {
  static Registry* instance = new Registry;  // never destroyed: allocations may be freed during exit
  return *instance;
}

}  // namespace

void* allocate_device(size_t bytes) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* ptr = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (ptr == nullptr) return nullptr;
  std::memset(ptr, 0xff, rounded);  // NaN as floats: reading what nobody wrote shows up
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.sizes[reinterpret_cast<uintptr_t>(ptr)] = bytes;
  return ptr;
}

bool free_device(void* ptr) {
  Registry& r = registry();
  {
    const std::lock_guard lock(r.mutex);
    if (r.sizes.erase(reinterpret_cast<uintptr_t>(ptr)) == 0) return false;
  }
  std::free(ptr);
  return true;
}

MemoryKind classify(const void* ptr, size_t bytes) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  auto after = r.sizes.upper_bound(address);
  if (after == r.sizes.begin()) return MemoryKind::Host;
  const auto& [start, size] = *std::prev(after);
  // A zero-byte allocation still owns its start address.
  if (address >= start + std::max<size_t>(size, 1)) return MemoryKind::Host;
  return address + bytes <= start + size ? MemoryKind::Device : MemoryKind::Invalid;
}

}  // namespace attn::cuda_emulator::runtime
