// What tests can ask the emulated CUDA runtime (cuda/emulator/runtime/include/cuda_runtime.h)
// about the host's reads of device memory, e.g. that a forward pass on "cuda" never waits
// for the device:
//   const uint64_t before = attn::cuda_emulator::device_to_host_copies();
//   ... forward ...
//   CHECK(attn::cuda_emulator::device_to_host_copies() == before);
// Available in programs linked with attnlab_cuda_emulated only.
#pragma once
#include <cstdint>

namespace attn::cuda_emulator {

// How many copies from device memory into host memory (each cudaMemcpy* whose source is a
// device allocation and whose destination is not) this process has made so far.
uint64_t device_to_host_copies();

}  // namespace attn::cuda_emulator
