// The emulated runtime's device memory (cuda/emulator/runtime/include/cuda_runtime.h): host
// memory handed out by cudaMalloc and remembered, so that copies and cuBLAS can tell device
// pointers from host ones and refuse ranges no allocation holds.
#pragma once
#include <cstddef>

namespace attn::cuda_emulator::runtime {

// A fresh device allocation of `bytes` (256-byte aligned, filled with 0xff bytes), or null
// when the heap has no room.
void* allocate_device(size_t bytes);
// Frees a pointer allocate_device returned; false (and nothing freed) for any other pointer.
bool free_device(void* ptr);

enum class MemoryKind {
  Host,     // no device allocation holds `ptr`
  Device,   // one device allocation holds all of [ptr, ptr + bytes)
  Invalid,  // the range starts inside a device allocation and runs past its end
};
MemoryKind classify(const void* ptr, size_t bytes);

}  // namespace attn::cuda_emulator::runtime
