// cuBLAS, opened the first time the backend calls it.
//
// Linking libcublas makes every start of every attnlab program pay for the static
// initialisers of libcublas and libcublasLt (540 MB): 0.35 s and 25,000 page faults on a
// 2-core AMD EPYC (Zen 5), even for `attnlab --help` and on machines without a GPU, where
// cuBLAS is never used. So the binaries do not link it: this file defines the eight cuBLAS
// functions the backend calls (cuda_backend.cpp, device_info.cpp) with the signatures of
// cublas_api.h, and each forwards to the library's own, looked up once. The library is
// opened by the first call: when `--device cuda` activates the backend, or `attnlab info`
// asks for its version. Only the real build compiles this file; the emulated build defines
// the same functions itself (cuda/emulator/runtime/cublas.cpp).
//
// The library is searched by its soname (libcublas.so.13) first, so that LD_LIBRARY_PATH
// and the system's library cache decide as they would for a linked library, then in the
// toolkit's directory found at build time (ATTNLAB_CUBLAS_DIRECTORY). When it cannot be
// opened every call returns CUBLAS_STATUS_NOT_INITIALIZED and cublasGetStatusString says
// why, so the backend's usual check reports it: "cuBLAS: cublasCreate failed: cuBLAS could
// not be loaded: ...".
#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>

#define ATTN_STRINGIFY_VALUE(x) #x
#define ATTN_STRINGIFY(x) ATTN_STRINGIFY_VALUE(x)

namespace {

constexpr const char* kSoname = "libcublas.so." ATTN_STRINGIFY(CUBLAS_VER_MAJOR);

struct CublasLibrary {
  void* handle = nullptr;
  std::string error;  // why handle is null

  CublasLibrary() {
    handle = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    if (handle) return;
    error = dlerror();
    const std::string fallback = std::string(ATTNLAB_CUBLAS_DIRECTORY) + "/" + kSoname;
    handle = dlopen(fallback.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) error = "cuBLAS could not be loaded: " + error + "; nor from " + fallback;
  }
};

const CublasLibrary& library() {
  static const CublasLibrary opened;
  return opened;
}

// The library's function `name`; null when the library is not there, or (a library that is
// not cuBLAS of this version) has no such function.
void* symbol(const char* name) {
  const CublasLibrary& lib = library();
  return lib.handle ? dlsym(lib.handle, name) : nullptr;
}

// Calls `function` with `args`, whose types are those of the calling definition's parameters:
// the function's type as cublas_api.h declares it (taken from the arguments because some of
// cuBLAS's names are overloaded in C++, and decltype cannot pick one).
template <typename Result, typename... Args>
Result call(void* function, Args... args) {
  return reinterpret_cast<Result (*)(Args...)>(function)(args...);
}

constexpr cublasStatus_t kNotLoaded = CUBLAS_STATUS_NOT_INITIALIZED;

}  // namespace

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  static void* const real = symbol("cublasCreate_v2");
  if (!real) return kNotLoaded;
  return call<cublasStatus_t>(real, handle);
}

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  static void* const real = symbol("cublasDestroy_v2");
  if (!real) return kNotLoaded;
  return call<cublasStatus_t>(real, handle);
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  static void* const real = symbol("cublasSetStream_v2");
  if (!real) return kNotLoaded;
  return call<cublasStatus_t>(real, handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasGetProperty(libraryPropertyType type, int* value) {
  static void* const real = symbol("cublasGetProperty");
  if (!real) return kNotLoaded;
  return call<cublasStatus_t>(real, type, value);
}

const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  static void* const real = symbol("cublasGetStatusString");
  if (real) return call<const char*>(real, status);
  const CublasLibrary& lib = library();
  return lib.handle ? "cuBLAS has no cublasGetStatusString (another cuBLAS version?)" : lib.error.c_str();
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                                         cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo) {
  static void* const real = symbol("cublasGemmEx");
  if (!real) return kNotLoaded;
  return call<cublasStatus_t>(real, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                              Ctype, ldc, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                                const void* const Aarray[], cudaDataType Atype, int lda,
                                                const void* const Barray[], cudaDataType Btype, int ldb,
                                                const void* beta, void* const Carray[], cudaDataType Ctype, int ldc,
                                                int batchCount, cublasComputeType_t computeType,
                                                cublasGemmAlgo_t algo) {
  static void* const real = symbol("cublasGemmBatchedEx");
  if (!real) return kNotLoaded;
  return call<cublasStatus_t>(real, handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb,
                              beta, Carray, Ctype, ldc, batchCount, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha,
    const void* A, cudaDataType Atype, int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
    long long int strideB, const void* beta, void* C, cudaDataType Ctype, int ldc, long long int strideC,
    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  static void* const real = symbol("cublasGemmStridedBatchedEx");
  if (!real) return kNotLoaded;
  return call<cublasStatus_t>(real, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                              strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}
