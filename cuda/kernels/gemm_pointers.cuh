// The operand pointers of a batch of matrix products over two batch dims of independent
// strides (attention's heads left interleaved in a [B, T, H, d] projection: matrix (b, h)
// starts at b · stride_b + h · stride_h, which no single stride reaches), in the
// cuda/kernels/device.hpp dialect: one thread per matrix writes where that matrix starts in
// each operand, for cuBLAS's pointer-array batched product (cublasGemmBatchedEx).
#pragma once
#include "cuda/kernels/batch_operand.hpp"
#include "cuda/kernels/device.hpp"

namespace attn::cuda_kernels {

// For matrix m = i · inner + j of the batch (i < count / inner): a_out[m], b_out[m], c_out[m]
// its start in a, b and c.
__global__ void gemm_pointers_kernel(BatchOperand a, BatchOperand b, BatchOperand c, long long inner,
                                     long long count, const float** a_out, const float** b_out, float** c_out) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long m = (long long)blockIdx.x * blockDim.x + threadIdx.x; m < count; m += stride) {
    const long long i = m / inner, j = m % inner;
    a_out[m] = a.at(i, j);
    b_out[m] = b.at(i, j);
    c_out[m] = const_cast<float*>(c.at(i, j));
  }
}

}  // namespace attn::cuda_kernels
