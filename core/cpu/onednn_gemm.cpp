#include "core/cpu/onednn_gemm.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <type_traits>
#include <vector>

#include "core/bfloat16.hpp"
#include "core/error.hpp"

namespace attn::cpu {
namespace {

using dnnl::memory;

// Copies a rows×cols float32 matrix (row stride ld) into dense rows·cols elements, each
// rounded to bfloat16: its bits (uint16_t) or its value (float).
template <typename Rounded>
void round_to_bfloat16(const float* src, int64_t rows, int64_t cols, int64_t ld, std::vector<Rounded>& dst) {
  if (dst.size() < size_t(rows * cols)) dst.resize(size_t(rows * cols));
  Rounded* out = dst.data();
#pragma omp parallel for schedule(static) if (rows * cols >= (int64_t(1) << 16))
  for (int64_t r = 0; r < rows; ++r) {
    const float* in_row = src + r * ld;
    Rounded* out_row = out + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const uint16_t bits = float_to_bfloat16(in_row[c]);
      if constexpr (std::is_same_v<Rounded, float>) out_row[c] = bfloat16_to_float(bits);
      else out_row[c] = bits;
    }
  }
}

// An operand of the product after rounding: dense bfloat16 in the memory order of the
// float32 source, described to oneDNN by its logical shape and strides.
struct Bf16Operand {
  std::vector<uint16_t> storage;
  memory::desc desc;

  void assign(char trans, int64_t rows, int64_t cols, const float* src, int64_t ld) {
    const bool transposed = trans == 'T';
    // In memory a transposed operand is its cols×rows transpose, stored row-major.
    const int64_t stored_rows = transposed ? cols : rows, stored_cols = transposed ? rows : cols;
    round_to_bfloat16(src, stored_rows, stored_cols, ld, storage);
    const memory::dims strides = transposed ? memory::dims{1, rows} : memory::dims{cols, 1};
    desc = memory::desc({rows, cols}, memory::data_type::bf16, strides);
  }
};

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// One matmul primitive per operand layout (row- or column-major A and B) and per
// "accumulate into C or not", with sizes and row strides given at execution time (oneDNN's
// runtime dimensions), so no primitive is built per shape. (Leaving the layout itself to
// run time too would select oneDNN's slow reference kernel.)
memory::desc runtime_matrix(memory::data_type type, bool column_major) {
  const auto any = DNNL_RUNTIME_DIM_VAL;
  return memory::desc({any, any}, type, column_major ? memory::dims{1, any} : memory::dims{any, 1});
}

dnnl::matmul make_bf16_matmul(bool transposed_a, bool transposed_b, bool accumulate) {
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});  // alpha
  if (accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);  // C += alpha·A·B (other betas pre-scale C)
    attr.set_post_ops(sum);
  }
  const dnnl::matmul::desc desc(runtime_matrix(memory::data_type::bf16, transposed_a),
                                runtime_matrix(memory::data_type::bf16, transposed_b),
                                runtime_matrix(memory::data_type::f32, false));
  return dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, cpu_engine()));
}

// The bf16 matmul primitives, or null where oneDNN has no bf16 kernel for this CPU (it needs
// AVX-512 at least: an AVX2-only CPU refuses the primitive).
const dnnl::matmul* bf16_matmul(bool transposed_a, bool transposed_b, bool accumulate) {
  struct Table {
    dnnl::matmul entries[2][2][2];
    bool available = true;
    Table() {
      try {
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b)
            for (int acc = 0; acc < 2; ++acc) entries[a][b][acc] = make_bf16_matmul(a, b, acc);
      } catch (const dnnl::error&) {
        available = false;
      }
    }
  };
  static const Table table;  // built once, thread-safely, on first use
  return table.available ? &table.entries[transposed_a][transposed_b][accumulate] : nullptr;
}

// Without oneDNN bf16 kernels: the operands rounded to bfloat16 values in float32, then a
// float32 product. A product of two bfloat16 values is exact in float32, so this sums the
// same products in float32 as the bf16 kernels do — the same precision, none of the speed.
void rounded_float_gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                        int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  thread_local std::vector<float> a_rounded, b_rounded;
  const int64_t a_cols = transa == 'T' ? m : k, b_cols = transb == 'T' ? k : n;  // as stored
  round_to_bfloat16(a, transa == 'T' ? k : m, a_cols, lda, a_rounded);
  round_to_bfloat16(b, transb == 'T' ? n : k, b_cols, ldb, b_rounded);
  onednn_sgemm(transa, transb, m, n, k, alpha, a_rounded.data(), a_cols, b_rounded.data(), b_cols, beta, c, ldc);
}

void scale_rows(float* c, int64_t m, int64_t n, int64_t ldc, float beta) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) c[r * ldc + j] *= beta;
}

}  // namespace

void onednn_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  ATTN_CHECK(status == dnnl_success, "oneDNN sgemm failed (status {}) for m={} n={} k={}", int(status), m, n, k);
}

void onednn_bf16_gemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const dnnl::matmul* matmul = bf16_matmul(transa == 'T', transb == 'T', beta != 0.0f);
  if (matmul == nullptr) return rounded_float_gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  // Rounded operands live in per-thread buffers that only grow: no allocation per call.
  thread_local Bf16Operand a16, b16;
  thread_local dnnl::stream stream(cpu_engine());
  a16.assign(transa, m, k, a, lda);
  b16.assign(transb, k, n, b, ldb);
  if (beta != 0.0f && beta != 1.0f) scale_rows(c, m, n, ldc, beta);
  const memory::desc c_desc({m, n}, memory::data_type::f32, memory::dims{ldc, 1});
  float alpha_value = alpha;
  const memory::desc scalar({1}, memory::data_type::f32, memory::dims{1});
  const dnnl::engine& engine = cpu_engine();
  matmul->execute(stream, {{DNNL_ARG_SRC, memory(a16.desc, engine, a16.storage.data())},
                           {DNNL_ARG_WEIGHTS, memory(b16.desc, engine, b16.storage.data())},
                           {DNNL_ARG_DST, memory(c_desc, engine, c)},
                           {DNNL_ARG_ATTR_OUTPUT_SCALES, memory(scalar, engine, &alpha_value)}});
  stream.wait();
}

}  // namespace attn::cpu
