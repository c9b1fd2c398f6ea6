// CUDA status checks (cuda/kernel_launch.hpp): the one place CUDA errors become attn::Error.
#include <cuda_runtime.h>

#include "core/error.hpp"
#include "cuda/kernel_launch.hpp"

namespace attn::cuda {

void check_cuda(int status, const char* what) {
  const auto error = static_cast<cudaError_t>(status);
  ATTN_CHECK(error == cudaSuccess, "CUDA: {} failed: {} ({})", what, cudaGetErrorString(error),
             cudaGetErrorName(error));
}

}  // namespace attn::cuda
