// The emulated cuBLAS (include/cublas_v2.h): argument checks as cuBLAS makes them, then one
// OpenBLAS product per batch, in cuBLAS's column-major convention.
#include <cblas.h>
#include <cublas_v2.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <vector>

#include "core/bfloat16.hpp"
#include "cuda/emulator/runtime/device_memory.hpp"

struct cublasContext {
  cudaStream_t stream = nullptr;  // kept for cuBLAS's contract; emulated work runs at once
};

namespace attn::cuda_emulator {
namespace {

struct HandleRegistry {
  std::mutex mutex;
  std::set<cublasHandle_t> live;
};

HandleRegistry& handles() {
  static HandleRegistry* instance = new HandleRegistry;  // never destroyed, like the streams
  return *instance;
}

bool is_live(cublasHandle_t handle) {
  HandleRegistry& r = handles();
  const std::lock_guard lock(r.mutex);
  return r.live.count(handle) != 0;
}

// One operand as stored: a column-major matrix of `rows` × `cols` with leading dimension ld,
// one every `stride` elements for each batch.
struct StoredMatrix {
  const float* data;
  int rows, cols, ld;
  long long stride;

  const float* batch(int i) const { return data + i * stride; }
  // Elements from the batch's first to its last one.
  size_t span() const { return cols == 0 || rows == 0 ? 0 : size_t(cols - 1) * size_t(ld) + size_t(rows); }
  bool in_device_memory(int batch_count) const {
    for (int i = 0; i < batch_count; ++i)
      if (runtime::classify(batch(i), span() * sizeof(float)) != runtime::MemoryKind::Device) return false;
    return true;
  }
};

// op(X) is rows × cols, so X as stored is that or its transpose.
StoredMatrix stored(const void* data, cublasOperation_t op, int rows, int cols, int ld, long long stride) {
  const bool transposed = op == CUBLAS_OP_T;
  return {static_cast<const float*>(data), transposed ? cols : rows, transposed ? rows : cols, ld, stride};
}

// The batch's matrix with every element rounded to bfloat16, packed (ld = rows).
std::vector<float> rounded_to_bfloat16(const StoredMatrix& m, int batch) {
  std::vector<float> packed(size_t(m.rows) * size_t(m.cols));
  const float* source = m.batch(batch);
  for (int c = 0; c < m.cols; ++c)
    for (int r = 0; r < m.rows; ++r)
      packed[size_t(c) * size_t(m.rows) + size_t(r)] =
          bfloat16_to_float(float_to_bfloat16(source[size_t(c) * size_t(m.ld) + size_t(r)]));
  return packed;
}

CBLAS_TRANSPOSE cblas_op(cublasOperation_t op) { return op == CUBLAS_OP_T ? CblasTrans : CblasNoTrans; }

}  // namespace
}  // namespace attn::cuda_emulator

using attn::cuda_emulator::StoredMatrix;

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasContext;
  auto& r = attn::cuda_emulator::handles();
  const std::lock_guard lock(r.mutex);
  r.live.insert(*handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  auto& r = attn::cuda_emulator::handles();
  {
    const std::lock_guard lock(r.mutex);
    if (r.live.erase(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (!attn::cuda_emulator::is_live(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid value was used as an argument";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  }
  return "unknown cuBLAS status";
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo) {
  using namespace attn::cuda_emulator;
  if (!is_live(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (Atype != CUDA_R_32F || Btype != CUDA_R_32F || Ctype != CUDA_R_32F || algo != CUBLAS_GEMM_DEFAULT ||
      (computeType != CUBLAS_COMPUTE_32F && computeType != CUBLAS_COMPUTE_32F_FAST_16BF))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  const StoredMatrix a = stored(A, transa, m, k, lda, strideA), b = stored(B, transb, k, n, ldb, strideB);
  const StoredMatrix c = stored(C, CUBLAS_OP_N, m, n, ldc, strideC);
  const bool valid_ops = (transa == CUBLAS_OP_N || transa == CUBLAS_OP_T) && (transb == CUBLAS_OP_N || transb == CUBLAS_OP_T);
  if (!valid_ops || m < 0 || n < 0 || k < 0 || batchCount < 0 || alpha == nullptr || beta == nullptr ||
      lda < std::max(1, a.rows) || ldb < std::max(1, b.rows) || ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0 || batchCount == 0) return CUBLAS_STATUS_SUCCESS;
  // A GPU would fault on a host pointer or a matrix running past its allocation.
  if (!a.in_device_memory(batchCount) || !b.in_device_memory(batchCount) || !c.in_device_memory(batchCount))
    return CUBLAS_STATUS_INVALID_VALUE;
  const float alpha_f = *static_cast<const float*>(alpha), beta_f = *static_cast<const float*>(beta);
  const runtime::DeviceAccess access;
  for (int i = 0; i < batchCount; ++i) {
    float* c_i = static_cast<float*>(C) + i * strideC;
    if (computeType == CUBLAS_COMPUTE_32F_FAST_16BF) {
      const std::vector<float> a_i = rounded_to_bfloat16(a, i), b_i = rounded_to_bfloat16(b, i);
      cblas_sgemm(CblasColMajor, cblas_op(transa), cblas_op(transb), m, n, k, alpha_f, a_i.data(), std::max(1, a.rows),
                  b_i.data(), std::max(1, b.rows), beta_f, c_i, ldc);
    } else {
      cblas_sgemm(CblasColMajor, cblas_op(transa), cblas_op(transb), m, n, k, alpha_f, a.batch(i), lda, b.batch(i),
                  ldb, beta_f, c_i, ldc);
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta, C,
                                    Ctype, ldc, 0, 1, computeType, algo);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                   int n, int k, const void* alpha, const void* const Aarray[], cudaDataType Atype,
                                   int lda, const void* const Barray[], cudaDataType Btype, int ldb, const void* beta,
                                   void* const Carray[], cudaDataType Ctype, int ldc, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  using namespace attn::cuda_emulator;
  if (batchCount < 0) return CUBLAS_STATUS_INVALID_VALUE;
  // The arrays of addresses live in device memory, as cuBLAS requires.
  const size_t array_bytes = size_t(batchCount) * sizeof(void*);
  for (const void* array : {static_cast<const void*>(Aarray), static_cast<const void*>(Barray),
                            static_cast<const void*>(Carray)})
    if (batchCount > 0 && runtime::classify(array, array_bytes) != runtime::MemoryKind::Device)
      return CUBLAS_STATUS_INVALID_VALUE;
  const auto count = static_cast<size_t>(batchCount);
  std::vector<const void*> a(count), b(count);
  std::vector<void*> c(count);
  {
    const runtime::DeviceAccess access;
    std::copy(Aarray, Aarray + batchCount, a.begin());
    std::copy(Barray, Barray + batchCount, b.begin());
    std::copy(Carray, Carray + batchCount, c.begin());
  }
  for (size_t i = 0; i < count; ++i) {
    const cublasStatus_t status = cublasGemmEx(handle, transa, transb, m, n, k, alpha, a[i], Atype, lda, b[i], Btype,
                                               ldb, beta, c[i], Ctype, ldc, computeType, algo);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
  }
  return CUBLAS_STATUS_SUCCESS;
}
