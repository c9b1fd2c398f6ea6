// The emulated runtime's device memory (cuda/emulator/runtime/include/cuda_runtime.h): host
// memory handed out by cudaMalloc and remembered, so that copies and cuBLAS can tell device
// pointers from host ones and refuse ranges no allocation holds.
//
// Like a GPU's, this memory is out of the host's reach: every allocation lies in one arena
// whose pages are inaccessible (PROT_NONE) except while the runtime itself works on them — a
// copy, a cuBLAS product, a kernel launch (DeviceAccess). Host code that reads or writes
// device memory directly, which on a GPU crashes or reads garbage, therefore faults here too,
// and the fault is reported as that (the address, the allocation, a backtrace) before the
// program ends.
#pragma once
#include <cstddef>

namespace attn::cuda_emulator::runtime {

// A fresh device allocation of `bytes` (256-byte aligned, filled with 0xff bytes), or null
// when the arena has no room.
void* allocate_device(size_t bytes);
// Frees a pointer allocate_device returned; false (and nothing freed) for any other pointer.
bool free_device(void* ptr);

enum class MemoryKind {
  Host,     // no device allocation holds `ptr`
  Device,   // one device allocation holds all of [ptr, ptr + bytes)
  Invalid,  // the range starts inside a device allocation and runs past its end
};
MemoryKind classify(const void* ptr, size_t bytes);

// While one lives (on any thread), device memory is readable and writable: the runtime's own
// work is wrapped in one. Nests and may overlap between threads.
class DeviceAccess {
 public:
  DeviceAccess();
  ~DeviceAccess();
  DeviceAccess(const DeviceAccess&) = delete;
  DeviceAccess& operator=(const DeviceAccess&) = delete;
};

}  // namespace attn::cuda_emulator::runtime
