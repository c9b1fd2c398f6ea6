// The additive rule in chunks of GEMMs (see additive_linear_attention.hpp for the equations).
// Rows are spread over the OpenMP threads, each running single-threaded BLAS on its rows.
#include "core/cpu/additive_linear_attention.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <vector>

#include "core/dtype.hpp"

namespace attn::cpu {
namespace {

constexpr int64_t kChunk = 64;
// Below this length the step-by-step scan is as fast (measured: B 8, d 512, 8 heads).
constexpr int64_t kChunkedFrom = 16;

// C = A·B (+ C when accumulate), row-major, A m×k (or its transpose), B k×n (or its transpose).
struct Operand {
  bool transposed;
  int64_t ld;
};

void gemm(int64_t m, int64_t n, int64_t k, const float* a, Operand da, const float* b, Operand db, bool accumulate,
          float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, da.transposed ? CblasTrans : CblasNoTrans, db.transposed ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, da.ld, b, db.ld, accumulate ? 1.0f : 0.0f, c, ldc);
}

void gemm(int64_t m, int64_t n, int64_t k, const double* a, Operand da, const double* b, Operand db, bool accumulate,
          double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, da.transposed ? CblasTrans : CblasNoTrans, db.transposed ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0, a, da.ld, b, db.ld, accumulate ? 1.0 : 0.0, c, ldc);
}

// Zeroes the entries above the diagonal of an L×L block (the future, s > t).
template <typename T>
void keep_lower_triangle(T* block, int64_t length) {
  for (int64_t t = 0; t < length; ++t) std::fill(block + t * length + t + 1, block + (t + 1) * length, T(0));
}

struct Sizes {
  int64_t rows, length, features, values;  // R, T, M, N
  int64_t chunks() const { return (length + kChunk - 1) / kChunk; }
};

// One row's matrices, [T, M] or [T, N] row-major; chunk(c) gives the first row of chunk c.
template <typename T>
struct RowView {
  T* data;
  int64_t width;
  T* chunk(int64_t c) const { return data + c * kChunk * width; }
  Operand plain() const { return {false, width}; }
  Operand transposed() const { return {true, width}; }
};

template <typename T>
RowView<T> row_of(const Tensor& t, int64_t r) {
  const int64_t width = t.size(2);
  return {const_cast<T*>(t.data<T>()) + r * t.size(1) * width, width};
}

// Runs body(row, thread's scratch) for every row, rows split statically over the threads so
// that each row's products are single-threaded BLAS calls.
template <typename T, typename Body>
void for_each_row(int64_t rows, Body&& body) {
#pragma omp parallel
  {
    std::vector<T> scratch;
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    for (int64_t r = rows * t / nt; r < rows * (t + 1) / nt; ++r) body(r, scratch);
  }
}

template <typename T>
void forward_typed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& state, const Tensor& y,
                   const Sizes& s) {
  const int64_t m = s.features, n = s.values;
  for_each_row<T>(s.rows, [&](int64_t r, std::vector<T>& scores) {
    const RowView<T> Q = row_of<T>(q, r), K = row_of<T>(k, r), V = row_of<T>(v, r), Y = row_of<T>(y, r);
    T* S = state.data<T>() + r * n * m;
    scores.resize(size_t(kChunk * kChunk));
    for (int64_t c = 0; c < s.chunks(); ++c) {
      const int64_t len = std::min(kChunk, s.length - c * kChunk);
      gemm(len, len, m, Q.chunk(c), Q.plain(), K.chunk(c), K.transposed(), false, scores.data(), len);  // Q Kᵀ
      keep_lower_triangle(scores.data(), len);
      gemm(len, n, len, scores.data(), {false, len}, V.chunk(c), V.plain(), false, Y.chunk(c), n);  // P V
      gemm(len, n, m, Q.chunk(c), Q.plain(), S, {true, m}, true, Y.chunk(c), n);                    // + Q Sᵀ
      gemm(n, m, len, V.chunk(c), V.transposed(), K.chunk(c), K.plain(), true, S, m);               // S += Vᵀ K
    }
  });
}

template <typename T>
void backward_typed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dy, const Tensor& dq,
                    const Tensor& dk, const Tensor& dv, const Sizes& s) {
  const int64_t m = s.features, n = s.values, size = n * m, chunks = s.chunks();
  for_each_row<T>(s.rows, [&](int64_t r, std::vector<T>& scratch) {
    const RowView<T> Q = row_of<T>(q, r), K = row_of<T>(k, r), V = row_of<T>(v, r), G = row_of<T>(dy, r);
    const RowView<T> dQ = row_of<T>(dq, r), dK = row_of<T>(dk, r), dV = row_of<T>(dv, r);
    // Scratch: the state before each chunk, U, and the two score blocks P and R.
    scratch.assign(size_t((chunks + 1) * size + 2 * kChunk * kChunk), T(0));
    T* U = scratch.data() + chunks * size;
    T* P = U + size;
    T* R = P + kChunk * kChunk;
    for (int64_t c = 1; c < chunks; ++c) {  // S before chunk c = S before c−1 + V_{c−1}ᵀ K_{c−1}
      T* S = scratch.data() + c * size;
      std::copy(S - size, S, S);
      gemm(n, m, kChunk, V.chunk(c - 1), V.transposed(), K.chunk(c - 1), K.plain(), true, S, m);
    }
    for (int64_t c = chunks - 1; c >= 0; --c) {
      const int64_t len = std::min(kChunk, s.length - c * kChunk);
      const T* S = scratch.data() + c * size;
      gemm(len, len, m, Q.chunk(c), Q.plain(), K.chunk(c), K.transposed(), false, P, len);  // P = tril(Q Kᵀ)
      keep_lower_triangle(P, len);
      gemm(len, len, n, G.chunk(c), G.plain(), V.chunk(c), V.transposed(), false, R, len);  // R = tril(G Vᵀ)
      keep_lower_triangle(R, len);
      gemm(len, m, len, R, {false, len}, K.chunk(c), K.plain(), false, dQ.chunk(c), m);     // ∂Q = R K
      gemm(len, m, n, G.chunk(c), G.plain(), S, {false, m}, true, dQ.chunk(c), m);          //    + G S
      gemm(len, m, len, R, {true, len}, Q.chunk(c), Q.plain(), false, dK.chunk(c), m);      // ∂K = Rᵀ Q
      gemm(len, m, n, V.chunk(c), V.plain(), U, {false, m}, true, dK.chunk(c), m);          //    + V U
      gemm(len, n, len, P, {true, len}, G.chunk(c), G.plain(), false, dV.chunk(c), n);      // ∂V = Pᵀ G
      gemm(len, n, m, K.chunk(c), K.plain(), U, {true, m}, true, dV.chunk(c), n);           //    + K Uᵀ
      gemm(n, m, len, G.chunk(c), G.transposed(), Q.chunk(c), Q.plain(), true, U, m);       // U += Gᵀ Q
    }
  });
}

Sizes sizes_of(const Tensor& q, const Tensor& v) { return {q.size(0), q.size(1), q.size(2), v.size(2)}; }

}  // namespace

bool use_chunked_additive(const Tensor& a, const Tensor& b, int64_t length) {
  return !a.defined() && !b.defined() && length >= kChunkedFrom;
}

void additive_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& state,
                               const Tensor& y) {
  dispatch_floating(q.dtype(), [&](auto tag) { forward_typed<decltype(tag)>(q, k, v, state, y, sizes_of(q, v)); });
}

void additive_linear_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dy,
                                        const Tensor& dq, const Tensor& dk, const Tensor& dv) {
  dispatch_floating(q.dtype(),
                    [&](auto tag) { backward_typed<decltype(tag)>(q, k, v, dy, dq, dk, dv, sizes_of(q, v)); });
}

}  // namespace attn::cpu
