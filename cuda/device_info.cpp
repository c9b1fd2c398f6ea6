// CUDA device discovery (cuda/device_info.hpp), through the runtime API only: the driver is
// never linked, so a build without one runs and explains itself.
#include "cuda/device_info.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <fmt/format.h>

namespace attn::cuda {
namespace {

// "13.0" from CUDA's 13000.
std::string cuda_version_string(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

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
  int driver = 0, runtime = 0, major = 0, minor = 0, patch = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  return fmt::format("driver {}, runtime {}, cuBLAS {}.{}.{}", driver == 0 ? "none" : cuda_version_string(driver),
                     cuda_version_string(runtime), major, minor, patch);
}

}  // namespace attn::cuda
