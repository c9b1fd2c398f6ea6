// CUDA device discovery (cuda/device_info.hpp), through the runtime API only: the driver is
// never linked, so a build without one runs and explains itself.
#include "cuda/device_info.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <fmt/core.h>

#ifdef ATTNLAB_WITH_NCCL
#include <nccl.h>
#endif

namespace attn::cuda {
namespace {

// "13.0" from CUDA's 13000.
std::string cuda_version_string(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

// "NCCL 2.28.9" from the library linked in (2.9 and later encode X.Y.Z as X·10000 + Y·100 + Z),
// or why there is none.
std::string nccl_version() {
#ifdef ATTNLAB_WITH_NCCL
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return "NCCL version unknown";
  return fmt::format("NCCL {}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
#else
  return "NCCL not built";
#endif
}

// "cuBLAS 13.1.0", or why cuBLAS cannot be used (the first call opens it:
// cuda/loader/cublas_on_demand.cpp).
std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  const cublasStatus_t status = cublasGetProperty(MAJOR_VERSION, &major);
  if (status != CUBLAS_STATUS_SUCCESS) return fmt::format("cuBLAS not usable ({})", cublasGetStatusString(status));
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  return fmt::format("cuBLAS {}.{}.{}", major, minor, patch);
}

}  // namespace

std::string unavailable_reason() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  if (driver == 0) return "no NVIDIA driver is installed (libcuda.so was not found); install the driver to use a GPU";
  if (driver < runtime)
    return fmt::format("the NVIDIA driver supports CUDA {} but attnlab was built with CUDA {}; update the driver",
                       cuda_version_string(driver), cuda_version_string(runtime));
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    return fmt::format("the CUDA runtime cannot use the GPUs: {} ({})", cudaGetErrorString(status),
                       cudaGetErrorName(status));
  if (count == 0) return "the NVIDIA driver sees no GPU";
  return "";
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

std::string device_name(int index) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) return "unknown";
  return fmt::format("{} (sm_{}{}, {} MiB)", prop.name, prop.major, prop.minor, prop.totalGlobalMem >> 20);
}

std::string versions() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  // attnlab calls no cuDNN function (its own kernels do attention and normalisation), so
  // cuDNN is not linked just to print its version.
  return fmt::format("driver {}, runtime {}, {}, cuDNN not used, {}",
                     driver == 0 ? "none" : cuda_version_string(driver), cuda_version_string(runtime), cublas_version(),
                     nccl_version());
}

}  // namespace attn::cuda
