// Host entry points of the CUDA kernels (cuda/kernels/*.cuh), one thin .cu file per group
// (cuda/elementwise.cu, binary.cu, dropout.cu, row_reduce.cu, softmax.cu, layer_norm.cu)
// choosing the grid and block and launching on `stream` (a cudaStream_t; null is the default
// stream). Pointers are device memory holding contiguous float32 data. A launch that fails throws attn::Error
// naming the kernel and CUDA's reason; kernels run asynchronously, so errors inside a kernel
// surface at the next synchronisation.
#pragma once
#include <cstdint>

#include "core/kernel_params.hpp"
#include "cuda/kernels/two_operand_layout.hpp"

namespace attn::cuda {

// y[i] = value for i < n.
void launch_fill(float value, float* y, int64_t n, void* stream);
// y[i] = op(x[i]) for i < n (y may be x).
void launch_unary(UnaryOp op, UnaryParams params, const float* x, float* y, int64_t n, void* stream);
// out[i] = a[i] op b[i] over the n elements of a contiguous out laid out by `layout`; out
// holds float for arithmetic ops and bool for comparisons.
void launch_binary(BinaryOp op, const float* a, const float* b, void* out, const cuda_kernels::TwoOperandLayout& layout,
                   int64_t n, void* stream);
// out[r] = Σ_c x[r, c] over a [rows, cols] matrix.
void launch_row_sum(const float* x, float* out, int64_t rows, int64_t cols, void* stream);
// out = (residual +) dropout(x) with keep probability 1 − p from the Philox stream (seed,
// first), exactly as the CPU draws it; mask records keep; residual may be null.
void launch_dropout(const float* x, const float* residual, double p, uint64_t seed, uint64_t first, float* out,
                    bool* mask, int64_t n, void* stream);
// dx = mask ? dy · scale : 0.
void launch_dropout_backward(const float* dy, const bool* mask, double scale, float* dx, int64_t n, void* stream);
// Softmax (or log-softmax when log) over the last dim of a [rows, cols] matrix.
void launch_softmax(const float* x, float* y, int64_t rows, int64_t cols, bool log, void* stream);
// Its backward from y = softmax(x) (or log-softmax) and dy.
void launch_softmax_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t cols, bool log,
                             void* stream);
// Layer norm over the last dim of a [rows, cols] matrix; gamma and beta may be null; mean and
// rstd [rows] are written for the backward.
void launch_layer_norm(const float* x, const float* gamma, const float* beta, float eps, float* y, float* mean,
                       float* rstd, int64_t rows, int64_t cols, void* stream);
// Its backward: dx, and dgamma and dbeta (each may be null: not wanted) as column sums.
void launch_layer_norm_backward(const float* dy, const float* x, const float* gamma, const float* mean,
                                const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows, int64_t cols,
                                void* stream);

// Throws attn::Error when `status` (a cudaError_t) is not success, naming `what`.
void check_cuda(int status, const char* what);

}  // namespace attn::cuda
