// matmul throughput: attnlab's ops::matmul_into (oneDNN for these large products; fp32, and
// bf16 under --matmul-precision bf16, rounding included) against raw cblas_sgemm and raw
// Eigen, in the same run, float32 operands, at 1 and 2 threads, on 2048^3 and the Transformer shapes
// (tokens x D x F: 4096x512x2048, 4096x2048x512, 4096x512x512) and the weight-gradient
// shape 512x4096x2048 = X^T @ dY with X [4096, 512] read transposed. Reports GFLOP/s.
//   build-<dir>/bench/bench_matmul --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/core.h>

#include <string>

#include "apps/cli/runtime_environment.hpp"
#include "core/cpu/eigen.hpp"
#include "core/matmul_precision.hpp"
#include "core/ops.hpp"
#include "core/threads.hpp"

namespace {

using RowMajorMap = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
using RowMajorOut = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

struct GemmShape {
  int64_t m, k, n;
  bool a_transposed;  // A is stored [K, M] row-major and read as its transpose
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + (a_transposed ? "_At" : "");
  }
};

// Operands and output of one shape, float32, filled with small values.
struct GemmOperands {
  attn::Tensor a, b, out;
  explicit GemmOperands(const GemmShape& s)
      : a(attn::full(s.a_transposed ? attn::Shape{s.k, s.m} : attn::Shape{s.m, s.k}, 0.5)),
        b(attn::full({s.k, s.n}, 0.25)),
        out(attn::zeros({s.m, s.n})) {}
  attn::Tensor a_view(const GemmShape& s) const { return s.a_transposed ? a.transpose(0, 1) : a; }
};

void set_threads(int threads) {
  attn::set_num_threads(threads);
  Eigen::setNbThreads(threads);
}

void report(benchmark::State& state, const GemmShape& s) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * double(s.m) * double(s.k) * double(s.n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void bench_attnlab(benchmark::State& state, GemmShape s, int threads, attn::MatmulPrecision precision) {
  set_threads(threads);
  const attn::ScopedMatmulPrecision scoped(precision);
  GemmOperands d(s);
  const attn::Tensor a = d.a_view(s);
  for (auto _ : state) attn::ops::matmul_into(a, d.b, d.out);
  report(state, s);
}

void bench_cblas(benchmark::State& state, GemmShape s, int threads) {
  set_threads(threads);
  GemmOperands d(s);
  const float *a = d.a.data<float>(), *b = d.b.data<float>();
  float* c = d.out.data<float>();
  const CBLAS_TRANSPOSE trans_a = s.a_transposed ? CblasTrans : CblasNoTrans;
  const int64_t lda = s.a_transposed ? s.m : s.k;
  for (auto _ : state)
    cblas_sgemm(CblasRowMajor, trans_a, CblasNoTrans, s.m, s.n, s.k, 1.0f, a, lda, b, s.n, 0.0f, c, s.n);
  report(state, s);
}

void bench_eigen(benchmark::State& state, GemmShape s, int threads) {
  set_threads(threads);
  GemmOperands d(s);
  RowMajorMap b(d.b.data<float>(), s.k, s.n);
  RowMajorOut c(d.out.data<float>(), s.m, s.n);
  if (s.a_transposed) {
    RowMajorMap a(d.a.data<float>(), s.k, s.m);
    for (auto _ : state) c.noalias() = a.transpose() * b;
  } else {
    RowMajorMap a(d.a.data<float>(), s.m, s.k);
    for (auto _ : state) c.noalias() = a * b;
  }
  report(state, s);
}

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);  // the OpenBLAS kernels and OpenMP waits attnlab itself runs with
  const GemmShape shapes[] = {{2048, 2048, 2048, false},
                              {4096, 512, 2048, false},
                              {4096, 2048, 512, false},
                              {4096, 512, 512, false},
                              {512, 4096, 2048, true}};
  for (const GemmShape& s : shapes)
    for (int threads : {1, 2}) {
      const std::string suffix = fmt::format("/{}/threads:{}", s.name(), threads);
      benchmark::RegisterBenchmark(("matmul/attnlab" + suffix).c_str(), bench_attnlab, s, threads,
                                   attn::MatmulPrecision::Float32)
          ->UseRealTime();
      if (attn::cpu_has_fast_bf16())
        benchmark::RegisterBenchmark(("matmul/attnlab_bf16" + suffix).c_str(), bench_attnlab, s, threads,
                                     attn::MatmulPrecision::BFloat16)
            ->UseRealTime();
      benchmark::RegisterBenchmark(("matmul/cblas" + suffix).c_str(), bench_cblas, s, threads)->UseRealTime();
      benchmark::RegisterBenchmark(("matmul/eigen" + suffix).c_str(), bench_eigen, s, threads)->UseRealTime();
    }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
