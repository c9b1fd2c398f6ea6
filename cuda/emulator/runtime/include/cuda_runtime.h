// The emulated CUDA runtime (cuda/emulator/runtime/): the subset of CUDA's runtime API that
// the CUDA backend (cuda/*.cpp, cuda/*.cu) uses, with CUDA's names, types and error codes, so
// that the same backend sources compile with the host compiler and run on a machine without
// a GPU (the attnlab_cuda_emulated target). Kernels launched by the backend run on the
// emulator (cuda/emulator/emulator.hpp) through launch_kernel (cuda/launch_config.cuh).
//
// The semantics are CUDA's, with these simplifications (none makes the emulated backend
// faster or more permissive than CUDA in a way the tests could mistake for a pass):
// * One device ("attnlab CUDA emulator"); the current device is per host thread, as in CUDA.
// * Device memory is host memory in one reserved arena, 256-byte aligned like cudaMalloc's,
//   filled with 0xff bytes (NaN as floats) when allocated so that reading memory nobody wrote
//   shows up. The runtime remembers every allocation: copies classify their pointers as device
//   or host memory from that, refuse a range that runs past the end of an allocation
//   (cudaErrorInvalidValue, where a GPU would fault), and count the copies into host memory
//   (host_reads.hpp). As on a GPU, host code cannot touch device memory: the arena's pages are
//   inaccessible except during the runtime's own work (a copy, a cuBLAS product, a kernel
//   launch), and a fault in them is reported as host code touching device memory
//   (runtime/device_memory.hpp).
// * A stream runs its work at once, in the calling thread: a kernel or copy queued on it has
//   finished when the call returns, so a missing synchronisation is NOT caught either; the
//   order of work is the order of the calls, the order one stream gives on a GPU.
// * An event records the host's clock when recorded: the work queued before it has run by
//   then, so the time between two events is that work's time on the emulator.
// * Versions are those of the API these declarations follow (CUDA 13.0), for driver and
//   runtime alike.
#pragma once
#include <cstddef>

// The CUDA version whose API this subset follows.
#define CUDART_VERSION 13000

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
};

enum cudaMemcpyKind {
  cudaMemcpyDefault = 4,  // the direction follows from the pointers (unified addressing)
};

constexpr unsigned cudaStreamNonBlocking = 0x01;

struct CUstream_st;
typedef CUstream_st* cudaStream_t;
struct CUevent_st;
typedef CUevent_st* cudaEvent_t;

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int major;
  int minor;
};

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);

cudaError_t cudaMalloc(void** ptr, size_t size);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream);

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
// Milliseconds from start to end, both recorded (cudaErrorInvalidResourceHandle otherwise).
cudaError_t cudaEventElapsedTime(float* milliseconds, cudaEvent_t start, cudaEvent_t end);

// The error of the last runtime call of this thread that failed, reset to cudaSuccess.
cudaError_t cudaGetLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
