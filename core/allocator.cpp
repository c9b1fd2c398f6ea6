// Caching allocator (docs/design.md §2): requests are rounded to size classes, freed blocks go
// to per-class free lists and are handed out again, so steady-state training does no
// system allocation. One mutex guards the lists and the statistics.
#include "core/allocator.hpp"

#include <array>
#include <bit>
#include <cstdlib>

#include "core/error.hpp"

namespace attn {

size_t Allocator::round_size(size_t nbytes) {
  constexpr size_t kAlignment = 64;
  if (nbytes <= 4 * kAlignment) return std::max<size_t>(kAlignment, (nbytes + kAlignment - 1) / kAlignment * kAlignment);
  // Four classes per power of two (2^k * {1, 1.25, 1.5, 1.75}): at most 25% waste.
  size_t quarter = std::bit_floor(nbytes - 1) / 4;
  return (nbytes + quarter - 1) / quarter * quarter;
}

void* Allocator::allocate(size_t nbytes) {
  size_t size = round_size(nbytes);
  std::lock_guard lock(mu_);
  ++stats_.num_allocs;
  void* ptr = nullptr;
  auto cached = free_.find(size);
  if (cached != free_.end() && !cached->second.empty()) {
    ptr = cached->second.back();
    cached->second.pop_back();
    stats_.cached_bytes -= size;
    ++stats_.num_cache_hits;
  } else {
    // A miss while the cache holds more than was ever in use at once since it was last
    // emptied means the sizes being asked for keep changing (e.g. key/value caches growing one
    // token per decoding step): the cached blocks will not be reused, so return them instead
    // of letting them pile up. A training step's cache never exceeds that peak (its blocks
    // were all in use at the step's peak), so it keeps them: emptying it there would make the
    // next step miss again, and on a GPU each system free waits for the device.
    if (stats_.cached_bytes > std::max(peak_since_release_, kCacheSoftLimit)) release_cached_locked();
    ptr = system_allocate(size);
    if (ptr == nullptr) {  // memory may be sitting in the cache: give it back and retry once
      release_cached_locked();
      ptr = system_allocate(size);
    }
    ATTN_CHECK(ptr != nullptr, "out of memory on {}: could not allocate {} bytes ({} bytes in use)",
               device().str(), size, stats_.current_bytes);
    ++stats_.num_system_allocs;
  }
  stats_.current_bytes += size;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.current_bytes);
  peak_since_release_ = std::max(peak_since_release_, stats_.current_bytes);
  return ptr;
}

void Allocator::deallocate(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  size_t size = round_size(nbytes);
  std::lock_guard lock(mu_);
  free_[size].push_back(ptr);
  stats_.current_bytes -= size;
  stats_.cached_bytes += size;
}

void Allocator::release_cached() {
  std::lock_guard lock(mu_);
  release_cached_locked();
}

void Allocator::release_cached_locked() {
  for (auto& [size, blocks] : free_)
    for (void* block : blocks) system_free(block);
  free_.clear();
  stats_.cached_bytes = 0;
  peak_since_release_ = stats_.current_bytes;
}

AllocatorStats Allocator::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Allocator::reset_peak() {
  std::lock_guard lock(mu_);
  stats_.peak_bytes = stats_.current_bytes;
}

CpuAllocator::~CpuAllocator() { release_cached(); }

void* CpuAllocator::system_allocate(size_t nbytes) {
  return std::aligned_alloc(64, nbytes);  // nbytes is a size class: a multiple of 64
}

void CpuAllocator::system_free(void* ptr) { std::free(ptr); }

namespace {

struct AllocatorRegistry {
  std::mutex mu;
  std::array<Allocator*, 16> cuda{};  // by device index
};

AllocatorRegistry& registry() {
  static AllocatorRegistry* r = new AllocatorRegistry;  // never destroyed: storages may outlive static destructors
  return *r;
}

}  // namespace

Allocator& allocator_for(Device device) {
  if (device.is_cpu()) {
    static CpuAllocator* cpu = new CpuAllocator;  // never destroyed, for the same reason
    return *cpu;
  }
  AllocatorRegistry& r = registry();
  std::lock_guard lock(r.mu);
  ATTN_CHECK(device.index >= 0 && size_t(device.index) < r.cuda.size() && r.cuda[device.index] != nullptr,
             "no allocator for device {}: attnlab was built without CUDA or the device does not exist", device.str());
  return *r.cuda[device.index];
}

void register_allocator(Device device, Allocator* allocator) {
  ATTN_CHECK(device.is_cuda(), "the CPU allocator is built in; cannot register one for {}", device.str());
  AllocatorRegistry& r = registry();
  std::lock_guard lock(r.mu);
  ATTN_CHECK(device.index >= 0 && size_t(device.index) < r.cuda.size(), "device index {} out of range [0, {})",
             device.index, r.cuda.size());
  r.cuda[device.index] = allocator;
}

}  // namespace attn
