// --device for the benchmark programs: cpu (the default) or cuda[:N]. The programs are
// built with the CUDA runtime when the build has it (bench/CMakeLists.txt), as the attnlab
// binary is; a device that cannot be used is refused with the reason (core/device_runtime.hpp).
#pragma once
#include <string>

#include "core/device_runtime.hpp"
#ifdef ATTNLAB_WITH_CUDA
#include "cuda/cuda_device_runtime.hpp"
#endif

namespace attn::bench {

inline Device use_bench_device(const std::string& text) {
#ifdef ATTNLAB_WITH_CUDA
  cuda::install_cuda_runtime();
#endif
  const Device device = parse_device(text);
  use_device(device);
  return device;
}

}  // namespace attn::bench
