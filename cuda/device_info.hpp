// CUDA device discovery (compiled only with the CUDA backend: ATTNLAB_WITH_CUDA): whether
// this process can use CUDA, and if not, why — in words a user can act on.
#pragma once
#include <string>

namespace attn::cuda {

// Why CUDA cannot be used here (no driver, a driver older than the runtime, no device, ...);
// empty when it can.
std::string unavailable_reason();
int device_count();  // 0 when CUDA cannot be used
std::string device_name(int index);
// "driver 13.0, runtime 13.0, cuBLAS 13.0.0, cuDNN not used, NCCL 2.28.9" (the driver reads
// "none" when there is none; "NCCL not built" without the NCCL communicator, dist/).
std::string versions();

}  // namespace attn::cuda
