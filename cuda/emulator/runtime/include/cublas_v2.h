// The emulated cuBLAS (cuda/emulator/runtime/): the subset of cuBLAS's API that the CUDA
// backend uses, with cuBLAS's names, types and status codes. See cuda_runtime.h here for
// what the emulated runtime simplifies.
//
// cublasGemmStridedBatchedEx (and cublasGemmEx, its one-matrix case, and cublasGemmBatchedEx,
// whose matrices' addresses are read from arrays in device memory) computes what cuBLAS
// computes — column-major
// C_i = alpha · op(A_i) · op(B_i) + beta · C_i for each batch i, alpha and beta read from host
// memory — with one OpenBLAS cblas_sgemm per batch, after checking the arguments as cuBLAS
// does (dimensions, leading dimensions, data and compute types, a live handle) and that every
// matrix lies inside device memory. CUBLAS_COMPUTE_32F_FAST_16BF rounds both operands to
// bfloat16 (round to nearest even) and sums the products in float32, as the tensor cores do.
#pragma once
#include "cuda_runtime.h"

// The cuBLAS version whose API this subset follows.
#define CUBLAS_VER_MAJOR 13
#define CUBLAS_VER_MINOR 0
#define CUBLAS_VER_PATCH 0

enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
};

enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };

enum cublasComputeType_t { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_16BF = 75 };

enum cublasGemmAlgo_t { CUBLAS_GEMM_DEFAULT = -1 };

enum cudaDataType { CUDA_R_32F = 0 };

enum libraryPropertyType { MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2 };

struct cublasContext;
typedef cublasContext* cublasHandle_t;

cublasStatus_t cublasCreate(cublasHandle_t* handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value);
const char* cublasGetStatusString(cublasStatus_t status);

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                   int n, int k, const void* alpha, const void* const Aarray[], cudaDataType Atype,
                                   int lda, const void* const Barray[], cudaDataType Btype, int ldb, const void* beta,
                                   void* const Carray[], cudaDataType Ctype, int ldc, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t algo);
