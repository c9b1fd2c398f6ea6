// Host entry points of the CUDA kernels (cuda/kernels/*.cuh), one thin .cu file per group
// (cuda/elementwise.cu, binary.cu, dropout.cu, random.cu, indexing.cu, row_reduce.cu,
// softmax.cu, layer_norm.cu, cross_entropy.cu, parameter_update.cu, banded_conv.cu,
// gated_linear_attention.cu, delta_rule.cu, sum_slices.cu, attention.cu, gemm_pointers.cu)
// choosing the grid and block and launching on `stream` (a cudaStream_t; null is the default stream). Pointers are
// device memory holding contiguous data (float32 unless stated). A launch that fails throws
// attn::Error naming the kernel and CUDA's reason; kernels run asynchronously, so errors
// inside a kernel surface at the next synchronisation.
#pragma once
#include <cstdint>

#include "core/dtype.hpp"
#include "core/kernel_params.hpp"
#include "core/optimizer_params.hpp"
#include "cuda/kernels/attention_shape.hpp"
#include "cuda/kernels/band_shape.hpp"
#include "cuda/kernels/batch_operand.hpp"
#include "cuda/kernels/parameter_group.hpp"
#include "cuda/kernels/reduce_layout.hpp"
#include "cuda/kernels/scan_shape.hpp"
#include "cuda/kernels/strided_layout.hpp"

namespace attn::cuda {

// y[i] = *value for i < n, each element element_size bytes (1, 4 or 8); value is host memory.
void launch_fill(const void* value, size_t element_size, void* y, int64_t n, void* stream);
// y[i] = op(x[i]) for i < n (y may be x).
void launch_unary(UnaryOp op, UnaryParams params, const float* x, float* y, int64_t n, void* stream);
// The same over int32 or int64 (dtype) for the ops integers take (cuda_kernels::is_integer_unary),
// the scalars converted to the integer type as the CPU converts them.
void launch_integer_unary(UnaryOp op, UnaryParams params, DType dtype, const void* x, void* y, int64_t n,
                          void* stream);
// dx = dL/dx of y = op(x) from dy (y may be null for ops that do not read it).
void launch_unary_backward(UnaryOp op, UnaryParams params, const float* x, const float* y, const float* dy, float* dx,
                           int64_t n, void* stream);
// In place over y [rows, cols]: y = relu(y + bias) (bias [cols] may be null).
void launch_bias_relu(float* y, const float* bias, int64_t rows, int64_t cols, void* stream);
// dz = y > 0 ? dy : 0 and, when dbias is not null, dbias = the column sums of dz; partial
// then holds column_sum_chunks(rows, cols) · cols doubles of scratch.
void launch_bias_relu_backward(const float* y, const float* dy, float* dz, float* dbias, double* partial, int64_t rows,
                               int64_t cols, void* stream);
// out[c] = Σ_r x[r, c] over a contiguous [rows, cols] matrix, in float64 in a fixed order;
// partial holds column_sum_chunks(rows, cols) · cols doubles of scratch.
void launch_column_sums(const float* x, float* out, double* partial, int64_t rows, int64_t cols, void* stream);
int64_t column_sum_chunks(int64_t rows, int64_t cols);
// How many chunks of rows the column sums of a [rows, cols] matrix (layer norm's gradient) are
// split into, so that enough threads run: each chunk summed by a thread per
// column, then the chunks added in order.
int64_t column_chunks(int64_t rows, int64_t cols);
// out[i, :] = weight[indices[i], :] over out [rows, width], elements of element_size bytes
// (1, 4 or 8: any dtype); a row index outside [0, weight_rows) gives a row of zeros.
void launch_index_select_rows(const void* weight, int64_t weight_rows, const int64_t* indices, void* out,
                              size_t element_size, int64_t rows, int64_t width, void* stream);
// grad_weight[indices[i], :] += src[i, :] for the rows of src [rows, width], in index order;
// rows whose index lies outside [0, weight_rows) are left out. links holds 2 · rows int64 of
// scratch.
void launch_index_add_rows(float* grad_weight, int64_t weight_rows, const int64_t* indices, const float* src,
                           int64_t rows, int64_t width, long long* links, void* stream);
// out[r] = x[r, index[r]] over x [rows, cols].
void launch_gather_last(const float* x, const int64_t* index, float* out, int64_t rows, int64_t cols, void* stream);
// The k largest (or smallest) of each row of x [rows, cols], sorted, ties to the lower index.
void launch_topk(const float* x, int64_t k, bool largest, float* values, int64_t* indices, int64_t rows, int64_t cols,
                 void* stream);
// out[i] = a[i] op b[i] over the n elements of a contiguous out laid out by `layout`, a and b
// of `dtype` (float32, int32 or int64); out holds that dtype for arithmetic ops and bool for
// comparisons.
void launch_binary(BinaryOp op, DType dtype, const void* a, const void* b, void* out,
                   const cuda_kernels::StridedLayout& layout, int64_t n, void* stream);
// out[i] = cond[i] ? a[i] : b[i] over the n elements of a contiguous out (cond: layout's c).
void launch_where(const bool* cond, const float* a, const float* b, float* out,
                  const cuda_kernels::StridedLayout& layout, int64_t n, void* stream);
// Copies the n elements of `layout` (a: the source's strides, b: the destination's), each
// element_size bytes (1, 4 or 8), from src to dst.
void launch_strided_copy(const void* src, void* dst, size_t element_size, const cuda_kernels::StridedLayout& layout,
                         int64_t n, void* stream);
// The same from src_dtype to dst_dtype (any two dtypes), each element converted.
void launch_convert_copy(const void* src, DType src_dtype, void* dst, DType dst_dtype,
                         const cuda_kernels::StridedLayout& layout, int64_t n, void* stream);
// out[i] = op over the elements of x that output i reduces (layout), for `outputs` outputs;
// partial holds reduce_chunks(op, layout, outputs) · outputs doubles of scratch (may be null
// when that is 1).
void launch_reduce(ReduceOp op, const float* x, float* out, const cuda_kernels::ReduceLayout& layout, int64_t outputs,
                   double* partial, void* stream);
// How many chunks launch_reduce splits each output's reduced elements into: 1 (no split, no
// scratch) when there are outputs enough to fill the GPU, or the op is log-sum-exp.
int64_t reduce_chunks(ReduceOp op, const cuda_kernels::ReduceLayout& layout, int64_t outputs);
// Max or min along the layout's single reduced dim with its int64 index.
void launch_arg_reduce(bool is_max, const float* x, float* values, int64_t* indices,
                       const cuda_kernels::ReduceLayout& layout, int64_t outputs, void* stream);
// Running sums along the middle dim of a contiguous [outer, length, inner] tensor (from the
// end when reverse); element_is_float selects float32, else int64.
void launch_cumsum(const void* x, void* out, bool element_is_float, int64_t outer, int64_t length, int64_t inner,
                   bool reverse, void* stream);
// out[r] = Σ_c x[r, c] over a [rows, cols] matrix.
void launch_row_sum(const float* x, float* out, int64_t rows, int64_t cols, void* stream);
// out[i] = uniform in [low, high) or normal(mean, stddev) from the Philox stream (seed, first),
// the CPU's numbers.
void launch_uniform(float* out, double low, double high, uint64_t seed, uint64_t first, int64_t n, void* stream);
void launch_normal(float* out, double mean, double stddev, uint64_t seed, uint64_t first, int64_t n, void* stream);
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
// Its backward: dx, and dgamma and dbeta (each may be null: not wanted) as column sums;
// partial then holds 2 · column_chunks(rows, cols) · cols floats of scratch.
void launch_layer_norm_backward(const float* dy, const float* x, const float* gamma, const float* mean,
                                const float* rstd, float* dx, float* dgamma, float* dbeta, float* partial, int64_t rows,
                                int64_t cols, void* stream);

// Label-smoothed cross entropy over logits [rows, classes] and int64 targets: lse [rows] and,
// in 0-d float64 outputs, the summed loss, nll and counted rows; row_loss and row_nll are
// [rows] float64 scratch, first_bad_row a 0-d int64 (−1, or the first row whose target is out
// of range).
void launch_label_smoothed_ce(const float* logits, const int64_t* targets, double epsilon, int64_t ignore_index,
                              float* lse, double* row_loss, double* row_nll, double* loss, double* nll, double* count,
                              int64_t* first_bad_row, int64_t rows, int64_t classes, void* stream);
// grad = scale · dloss/dlogits from the saved lse.
void launch_label_smoothed_ce_backward(const float* logits, const int64_t* targets, const float* lse, double epsilon,
                                       int64_t ignore_index, double scale, float* grad, int64_t rows, int64_t classes,
                                       void* stream);
// The training step's kernels (core/backend.hpp), each over one group of up to
// kGroupTensors tensors (cuda/kernels/parameter_group.hpp) in one launch.
void launch_adam_update(const cuda_kernels::AdamGroup& group, void* stream);
void launch_nag_update(const cuda_kernels::NagGroup& group, void* stream);
// average ← decay·average + (1 − decay)·value over the group.
void launch_moving_average(const cuda_kernels::AverageGroup& group, double decay, void* stream);
// partial[b] = Σ x² over block b of the group in float64 (group.blocks.blocks() doubles).
void launch_sum_of_squares_partials(const cuda_kernels::FloatGroup& group, double* partial, void* stream);
// *total += Σ partial[0 .. count), in a fixed order.
void launch_add_partials(const double* partial, int64_t count, double* total, void* stream);
// x *= scale over the group; *found_nonfinite = 1 when a result is inf or NaN (found_nonfinite
// may be null).
void launch_scale_check_finite(const cuda_kernels::FloatGroup& group, double scale, float* found_nonfinite,
                               void* stream);

// The banded convolution of LightConv/DynamicConv: out [rows, C] from u [rows, C] and the taps
// w ([H, K] shared, or [rows, H, K]).
void launch_banded_conv(const float* u, const float* w, float* out, const cuda_kernels::BandShape& shape,
                        void* stream);
// Its backward: du and dw from dout. For shared taps, partial holds banded_conv_tap_chunks(shape)
// · H · K doubles of scratch (unused for per-position taps).
void launch_banded_conv_backward(const float* u, const float* w, const float* dout, float* du, float* dw,
                                 double* partial, const cuda_kernels::BandShape& shape, void* stream);
int64_t banded_conv_tap_chunks(const cuda_kernels::BandShape& shape);
// For the `count` matrices m = i · inner + j of a product batched over two dims: where each
// starts in a, b and c (a_out, b_out, c_out: device arrays of count pointers each), for
// cublasGemmBatchedEx.
void launch_gemm_pointers(const cuda_kernels::BatchOperand& a, const cuda_kernels::BatchOperand& b,
                          const cuda_kernels::BatchOperand& c, int64_t inner, int64_t count, const float** a_out,
                          const float** b_out, float** c_out, void* stream);

// Gated linear attention over q, k [R, T, M], v [R, T, N] with gates a [R, T, N] and b [R, T, M]
// (each may be null: ones); state [R, N, M] holds S_0 in and S_T out; y [R, T, N]. The shape
// comes from cuda/scan_plan.hpp's plan_scan.
void launch_gated_linear_attention(const float* q, const float* k, const float* v, const float* a, const float* b,
                                   float* state, float* y, const cuda_kernels::ScanShape& shape, void* stream);
// Its backward from S_0 = 0: dq, dk, dv and da, db (null when the gate is); scratch holds
// scan_scratch_floats(shape) floats (cuda/scan_plan.hpp).
void launch_gated_linear_attention_backward(const float* q, const float* k, const float* v, const float* a,
                                            const float* b, const float* dy, float* dq, float* dk, float* dv,
                                            float* da, float* db, float* scratch,
                                            const cuda_kernels::ScanShape& shape, void* stream);
// The delta rule over q, k [R, T, M], v [R, T, N] and beta [R, T]; state [R, N, M] holds W_0
// in and W_T out; y [R, T, N].
void launch_delta_rule(const float* q, const float* k, const float* v, const float* beta, float* state, float* y,
                       const cuda_kernels::ScanShape& shape, void* stream);
// Its backward from W_0 = 0: dq, dk, dv and dbeta; scratch as for gated linear attention.
void launch_delta_rule_backward(const float* q, const float* k, const float* v, const float* beta, const float* dy,
                                float* dq, float* dk, float* dv, float* dbeta, float* scratch,
                                const cuda_kernels::ScanShape& shape, void* stream);
// The fused attention forward: probabilities [B, H, Tq, Tk] (contiguous) and out through the
// strides of `shape`, from q, k, v read through theirs; padding Bool [B, Tk] (contiguous) or
// null. The sizes are within kFusedAttentionMax* (core/attention_limits.hpp).
void launch_attention_forward(const float* q, const float* k, const float* v, const bool* padding, float* out,
                              float* probabilities, const cuda_kernels::AttentionShape& shape, void* stream);
// out[i] = Σ_s planes[s · n + i] in slice order (the scans' sums over value-row slices).
void launch_sum_slices(const float* planes, float* out, int64_t n, int slices, void* stream);

// Throws attn::Error when `status` (a cudaError_t) is not success, naming `what`.
void check_cuda(int status, const char* what);

}  // namespace attn::cuda
