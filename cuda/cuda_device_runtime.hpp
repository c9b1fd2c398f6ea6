// The CUDA library's entry in the device-runtime registry (core/device_runtime.hpp): the
// program's main calls install_cuda_runtime() once; `attnlab info` then lists the GPUs and
// `--device cuda:N` switches the backend on (register_cuda_backend) when first asked for.
#pragma once

namespace attn::cuda {

void install_cuda_runtime();

}  // namespace attn::cuda
