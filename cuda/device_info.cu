// CUDA device discovery: how many GPUs this process can use (0 when there is no driver or
// no GPU). The CUDA kernels implementing core/backend.hpp come with the CUDA-backend issue.
#include <cuda_runtime.h>

#include "cuda/device_info.hpp"

namespace attn::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

std::string device_name(int index) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) return "unknown";
  return prop.name;
}

}  // namespace attn::cuda
