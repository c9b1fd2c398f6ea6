// The caching allocator of one GPU (core/allocator.hpp does the caching): blocks come from
// cudaMalloc on that device and go back with cudaFree only when the cache is emptied. Every
// kernel of a device runs on its one stream (cuda/cuda_backend.hpp), so a block freed by one
// kernel and handed to the next is ordered on that stream and safe to reuse without a wait.
#pragma once
#include "core/allocator.hpp"

namespace attn::cuda {

class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int index) : index_(index) {}
  ~CudaAllocator() override;
  Device device() const override { return Device::cuda(index_); }

 protected:
  void* system_allocate(size_t nbytes) override;
  void system_free(void* ptr) override;

 private:
  int index_;
};

}  // namespace attn::cuda
