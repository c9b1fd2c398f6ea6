// The caching allocator of one GPU (cuda/cuda_allocator.hpp).
#include "cuda/cuda_allocator.hpp"

#include <cuda_runtime.h>

#include "cuda/kernel_launch.hpp"

namespace attn::cuda {

CudaAllocator::~CudaAllocator() { release_cached(); }

void* CudaAllocator::system_allocate(size_t nbytes) {
  check_cuda(int(cudaSetDevice(index_)), "cudaSetDevice");
  void* ptr = nullptr;
  check_cuda(int(cudaMalloc(&ptr, nbytes)), "cudaMalloc");
  return ptr;
}

void CudaAllocator::system_free(void* ptr) {
  cudaSetDevice(index_);
  cudaFree(ptr);  // no throw: runs from destructors; a failure here leaves only a leak
}

}  // namespace attn::cuda
