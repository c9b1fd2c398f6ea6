// The profiler's clock on a GPU (core/profiler.hpp DeviceClock): each stamp a CUDA event
// recorded on the current device's stream, so a kernel is timed by the device between the
// events queued before and after it — its own run, with no launch or host wait in it.
#pragma once
#include "core/profiler.hpp"

namespace attn::cuda {

class CudaBackend;

// The clock of the CUDA backend's streams (created with the backend, never destroyed).
profiler::DeviceClock& device_clock(CudaBackend& backend);

}  // namespace attn::cuda
