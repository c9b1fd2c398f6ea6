// CPU GEMM: out[b] = alpha * a[b] @ b[b] + beta * out[b] (core/backend.hpp, batched_gemm).
//
// float64 -> cblas_dgemm. float32: large products -> oneDNN (core/cpu/onednn_gemm.hpp), in
// float32 or, when core/matmul_precision.hpp asks for it, with bfloat16 operands; the small
// products of a batch (attention's per-head ones) -> cblas_sgemm, one per OpenMP thread, as
// OpenBLAS has the lower per-call cost. Each operand
// is handed to BLAS as it lies in memory: a row-major view is passed with its row stride as
// the leading dimension, a column-major view (e.g. a transpose) with CblasTrans. Only a view
// that is neither (e.g. a broadcast row) is copied. Batch stride 0 means a broadcast operand.
// Views may carry two batch dims [B0, B1, M, K] with independent strides (attention heads
// split out of a [B, T, H·d] projection): all B0·B1 products form one batch, so small ones
// are spread over the threads in a single parallel region. out's matrices may be strided
// rows (row stride >= N, unit column stride), e.g. a head-interleaved [B, T, H, d] buffer.
//
// Why not Eigen's product: bench/bench_matmul.cpp measures the libraries on the Transformer
// shapes; on this machine Eigen is the slowest on every one (figures in bench/README.md).
#include <cblas.h>

#include <algorithm>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/onednn_gemm.hpp"
#include "core/matmul_precision.hpp"

namespace attn::cpu {
namespace {

// How one [rows, cols] matrix of a 3-D view is passed to BLAS.
struct BlasMatrix {
  bool usable = false;  // false: the view is neither row- nor column-major
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 1;
};

BlasMatrix describe_matrix(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  const int64_t min_row_ld = std::max<int64_t>(cols, 1), min_col_ld = std::max<int64_t>(rows, 1);
  // A single row (column) may have any stride along the other axis: BLAS never steps it.
  if ((col_stride == 1 || cols == 1) && (rows == 1 || row_stride >= min_row_ld))
    return {true, CblasNoTrans, rows == 1 ? min_row_ld : row_stride};
  if ((row_stride == 1 || rows == 1) && (cols == 1 || col_stride >= min_col_ld))
    return {true, CblasTrans, cols == 1 ? min_col_ld : col_stride};
  return {};
}

BlasMatrix describe_matrix(const Tensor& t) {
  return describe_matrix(t.size(-2), t.size(-1), t.stride(-2), t.stride(-1));
}

// Element offset of matrix `index` of the batch (row-major over the batch dims); extent-1
// dims (broadcast) contribute nothing.
struct BatchOffsets {
  int64_t inner_size = 1, outer_stride = 0, inner_stride = 0;
  BatchOffsets(const Tensor& t, int64_t inner) : inner_size(inner) {
    const int batch_dims = t.dim() - 2;
    if (batch_dims >= 1 && t.size(batch_dims - 1) > 1) inner_stride = t.stride(batch_dims - 1);
    if (batch_dims == 2 && t.size(0) > 1) outer_stride = t.stride(0);
  }
  int64_t operator()(int64_t index) const {
    return (index / inner_size) * outer_stride + (index % inner_size) * inner_stride;
  }
};

// The operand itself when BLAS can read it, else a contiguous copy (once, for all batches).
Tensor blas_readable(const Tensor& t) { return describe_matrix(t).usable ? t : t.contiguous(); }

// Below this many multiply-adds per matrix, BLAS's own threading does not pay off and the
// batch is spread over the OpenMP threads instead (attention's per-head products).
constexpr int64_t kSmallGemmMacs = int64_t(1) << 21;

// Rounding the operands to bfloat16 costs O(mk + kn) next to the product's O(mnk): it pays
// only when both m and n are large (so not for one decoding step's few rows).
bool use_bf16(int64_t m, int64_t n, int64_t k) {
  return matmul_precision() == MatmulPrecision::BFloat16 && std::min(m, n) >= 64 && m * n * k >= kSmallGemmMacs;
}

char trans_flag(const BlasMatrix& d) { return d.trans == CblasTrans ? 'T' : 'N'; }

// A few rows times a weight matrix (a decoding step's projections, B·beam rows): oneDNN's
// sgemm streams the weights fastest up to 8 rows; from 9 to 47 rows it is fastest called on
// blocks of 8 rows (measured on 2 threads, weights not in cache, 512×2048: 16 rows 264 µs
// blocked vs 455 µs in one call and 310 µs with OpenBLAS; 32 rows 419 / 525 / 449 µs).
constexpr int64_t kRowBlock = 8, kBlockedRowsBelow = 48;

void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, const BlasMatrix& da,
          const BlasMatrix& db, int64_t ldc, double alpha, double beta, bool large) {
  if (!large) {
    cblas_sgemm(CblasRowMajor, da.trans, db.trans, m, n, k, float(alpha), a, da.ld, b, db.ld, float(beta), c, ldc);
    return;
  }
  if (m > kRowBlock && m < kBlockedRowsBelow) {
    for (int64_t row = 0; row < m; row += kRowBlock) {
      const float* block = a + (da.trans == CblasTrans ? row : row * da.ld);
      onednn_sgemm(trans_flag(da), trans_flag(db), std::min(kRowBlock, m - row), n, k, float(alpha), block, da.ld, b,
                   db.ld, float(beta), c + row * ldc, ldc);
    }
    return;
  }
  const auto product = use_bf16(m, n, k) ? onednn_bf16_gemm : onednn_sgemm;
  product(trans_flag(da), trans_flag(db), m, n, k, float(alpha), a, da.ld, b, db.ld, float(beta), c, ldc);
}

void gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k, const BlasMatrix& da,
          const BlasMatrix& db, int64_t ldc, double alpha, double beta, bool /*large*/) {
  cblas_dgemm(CblasRowMajor, da.trans, db.trans, m, n, k, alpha, a, da.ld, b, db.ld, beta, c, ldc);
}

template <typename T>
void batched_gemm_typed(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  const int64_t m = out.size(-2), n = out.size(-1), k = a.size(-1);
  const int64_t inner = out.size(out.dim() - 3), batch = out.numel() / std::max<int64_t>(m * n, 1);
  const BlasMatrix da = describe_matrix(a), db = describe_matrix(b);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = out.data<T>();
  const BatchOffsets sa(a, inner), sb(b, inner), sc(out, inner);
  const int64_t ldc = std::max<int64_t>(out.stride(-2), std::max<int64_t>(n, 1));
  auto one = [&](int64_t i, bool large) {
    gemm(pa + sa(i), pb + sb(i), pc + sc(i), m, n, k, da, db, ldc, alpha, beta, large);
  };
  if (batch > 1 && m * n * k < kSmallGemmMacs) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < batch; ++i) one(i, false);
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i, true);
  }
}

}  // namespace

void CpuBackend::batched_gemm(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  if (out.numel() == 0) return;
  if (a.size(-1) == 0) {  // empty inner dimension: the product is zero
    if (beta == 0.0) fill(out, 0.0);
    else if (beta != 1.0) unary(UnaryOp::MulScalar, out, out, {beta});
    return;
  }
  const Tensor ra = blas_readable(a), rb = blas_readable(b);
  dispatch_floating(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    batched_gemm_typed<T>(ra, rb, out, alpha, beta);
  });
}

}  // namespace attn::cpu
