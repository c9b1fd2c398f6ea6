// float32 GEMMs through oneDNN, with BLAS's row-major calling convention:
//   C[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C,  op(X) = X or Xᵀ ('N' or 'T'),
// lda/ldb/ldc the row strides of the matrices as they lie in memory. beta = 0 never reads C.
//
// Why oneDNN for the large products: on the Transformer's shapes its float32 GEMM is 5-25%
// faster than OpenBLAS on this machine, and it has bfloat16 kernels for CPUs with
// AVX512-BF16/AMX (bench/README.md, "GEMM"). Both run on the OpenMP pool (docs/design.md §2).
#pragma once
#include <cstdint>

namespace attn::cpu {

// Full float32 products (dnnl_sgemm).
void onednn_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// A and B rounded to bfloat16 (core/bfloat16.hpp), products summed in float32, C float32.
// oneDNN's bf16 kernels where the CPU has them (AVX-512; fast with AVX512-BF16 or AMX); on
// an AVX2-only CPU the same rounding and float32 sums through the float32 GEMM.
void onednn_bf16_gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace attn::cpu
