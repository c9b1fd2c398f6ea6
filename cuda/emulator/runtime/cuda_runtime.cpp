// The emulated CUDA runtime (include/cuda_runtime.h): one device, device memory on the host
// heap (device_memory.hpp), streams that run their work at once, CUDA's error reporting.
#include <cuda_runtime.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>

#include "cuda/emulator/runtime/device_memory.hpp"
#include "cuda/emulator/runtime/host_reads.hpp"

struct CUstream_st {};  // work runs at once: a stream has no state beyond being live
struct CUevent_st {
  bool recorded = false;
  std::chrono::steady_clock::time_point when;  // the host's clock when recorded
};

namespace attn::cuda_emulator {
namespace {

constexpr int kDeviceCount = 1;

thread_local int current_device = 0;
thread_local cudaError_t last_error = cudaSuccess;
std::atomic<uint64_t> device_to_host_copy_count{0};

struct StreamRegistry {
  std::mutex mutex;
  std::set<cudaStream_t> live;
};

StreamRegistry& streams() {
  static StreamRegistry* instance = new StreamRegistry;  // never destroyed: streams may outlive statics
  return *instance;
}

// Records a failure as CUDA does (cudaGetLastError reports it) and returns it.
cudaError_t fail(cudaError_t error) {
  last_error = error;
  return error;
}

// The null stream, or one created and not destroyed.
bool is_live(cudaStream_t stream) {
  if (stream == nullptr) return true;
  StreamRegistry& r = streams();
  const std::lock_guard lock(r.mutex);
  return r.live.count(stream) != 0;
}

}  // namespace

uint64_t device_to_host_copies() { return device_to_host_copy_count.load(); }

}  // namespace attn::cuda_emulator

using attn::cuda_emulator::fail;
using attn::cuda_emulator::runtime::MemoryKind;

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return fail(cudaErrorInvalidValue);
  *count = attn::cuda_emulator::kDeviceCount;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= attn::cuda_emulator::kDeviceCount) return fail(cudaErrorInvalidDevice);
  attn::cuda_emulator::current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return fail(cudaErrorInvalidValue);
  *device = attn::cuda_emulator::current_device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return fail(cudaErrorInvalidValue);
  if (device < 0 || device >= attn::cuda_emulator::kDeviceCount) return fail(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::strncpy(prop->name, "attnlab CUDA emulator", sizeof(prop->name) - 1);
  prop->totalGlobalMem = size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGE_SIZE));  // the host's memory
  prop->major = 8;  // the oldest architecture the backend targets (sm_80)
  prop->minor = 0;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return fail(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return fail(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, size_t size) {
  if (ptr == nullptr) return fail(cudaErrorInvalidValue);
  *ptr = attn::cuda_emulator::runtime::allocate_device(size);
  return *ptr != nullptr ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  return attn::cuda_emulator::runtime::free_device(ptr) ? cudaSuccess : fail(cudaErrorInvalidValue);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  if (kind != cudaMemcpyDefault) return fail(cudaErrorInvalidValue);
  if (!attn::cuda_emulator::is_live(stream)) return fail(cudaErrorInvalidResourceHandle);
  if (count == 0) return cudaSuccess;
  const MemoryKind from = attn::cuda_emulator::runtime::classify(src, count);
  const MemoryKind to = attn::cuda_emulator::runtime::classify(dst, count);
  if (from == MemoryKind::Invalid || to == MemoryKind::Invalid) return fail(cudaErrorInvalidValue);
  const attn::cuda_emulator::runtime::DeviceAccess access;
  std::memmove(dst, src, count);
  if (from == MemoryKind::Device && to == MemoryKind::Host) ++attn::cuda_emulator::device_to_host_copy_count;
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (stream == nullptr || (flags & ~cudaStreamNonBlocking) != 0) return fail(cudaErrorInvalidValue);
  *stream = new CUstream_st;
  auto& r = attn::cuda_emulator::streams();
  const std::lock_guard lock(r.mutex);
  r.live.insert(*stream);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr) return fail(cudaErrorInvalidResourceHandle);
  auto& r = attn::cuda_emulator::streams();
  {
    const std::lock_guard lock(r.mutex);
    if (r.live.erase(stream) == 0) return fail(cudaErrorInvalidResourceHandle);
  }
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  // The stream's work has run already (include/cuda_runtime.h).
  return attn::cuda_emulator::is_live(stream) ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  if (event == nullptr) return fail(cudaErrorInvalidValue);
  *event = new CUevent_st;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return fail(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (event == nullptr || !attn::cuda_emulator::is_live(stream)) return fail(cudaErrorInvalidResourceHandle);
  event->recorded = true;
  event->when = std::chrono::steady_clock::now();
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  // The work before the event has run already (include/cuda_runtime.h).
  return event != nullptr ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventElapsedTime(float* milliseconds, cudaEvent_t start, cudaEvent_t end) {
  if (milliseconds == nullptr) return fail(cudaErrorInvalidValue);
  if (start == nullptr || end == nullptr || !start->recorded || !end->recorded)
    return fail(cudaErrorInvalidResourceHandle);
  *milliseconds = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  const cudaError_t error = attn::cuda_emulator::last_error;
  attn::cuda_emulator::last_error = cudaSuccess;
  return error;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
  }
  return "unrecognized error code";
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
  }
  return "unrecognized error code";
}
