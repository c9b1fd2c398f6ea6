// Per-device caching allocator. Freed blocks go to size-bucketed free lists and are reused,
// so a training step in steady state does no malloc/cudaMalloc. Statistics (current and
// peak bytes in use, allocation counts) are what `attnlab train` and the benchmarks report.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "core/device.hpp"

namespace attn {

struct AllocatorStats {
  size_t current_bytes = 0;    // bytes handed out and not yet freed
  size_t peak_bytes = 0;       // maximum of current_bytes since the last reset_peak()
  size_t cached_bytes = 0;     // bytes held in free lists for reuse
  uint64_t num_allocs = 0;     // allocate() calls
  uint64_t num_cache_hits = 0; // allocate() calls served from the free lists
  uint64_t num_system_allocs = 0;  // allocations that reached the system allocator
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns a block of at least `nbytes` bytes (64-byte aligned on CPU). nbytes may be 0.
  void* allocate(size_t nbytes);
  void deallocate(void* ptr, size_t nbytes);
  // Returns every cached block to the system.
  void release_cached();
  AllocatorStats stats() const;
  void reset_peak();
  virtual Device device() const = 0;

  // Size class a request of nbytes is rounded up to (blocks are reused per class).
  static size_t round_size(size_t nbytes);

 protected:
  virtual void* system_allocate(size_t nbytes) = 0;
  virtual void system_free(void* ptr) = 0;

 private:
  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;  // size class -> cached blocks
  AllocatorStats stats_;

  // Cached bytes a cache miss always tolerates; beyond them, a miss empties the cache when it
  // holds more than the most ever in use since it was last emptied (see allocate()).
  static constexpr size_t kCacheSoftLimit = size_t(256) << 20;
  size_t peak_since_release_ = 0;
  void release_cached_locked();  // release_cached() with mu_ held
};

class CpuAllocator final : public Allocator {
 public:
  Device device() const override { return Device::cpu(); }
  ~CpuAllocator() override;

 protected:
  void* system_allocate(size_t nbytes) override;
  void system_free(void* ptr) override;
};

// The allocator of a device (CPU always exists; CUDA ones are registered by cuda/).
Allocator& allocator_for(Device device);
void register_allocator(Device device, Allocator* allocator);

}  // namespace attn
