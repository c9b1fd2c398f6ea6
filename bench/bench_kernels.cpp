// Memory-bound kernels: softmax, layer norm and the fused label-smoothed cross entropy
// (forward and backward) at (4096, 512) and (4096, 8000), float32, 1 and 2 threads, in GB/s
// of tensor bytes read + written, next to a memcpy of the same tensor (read + write) as the
// reference of what the memory system gives.
//   build-<dir>/bench/bench_kernels --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "apps/cli/runtime_environment.hpp"
#include "core/ops.hpp"
#include "core/threads.hpp"

namespace {

using attn::Tensor;

struct KernelShape {
  int64_t rows, cols;
  std::string name() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

// Inputs of every kernel for one shape (float32), with the forward results the backward
// kernels read and the destination of the reference copy.
struct KernelInputs {
  Tensor x, dy, gamma, beta, targets;
  attn::ops::LayerNormResult layer_norm;
  Tensor copy_destination;

  explicit KernelInputs(const KernelShape& s)
      : x(attn::uniform({s.rows, s.cols}, -3.0, 3.0)),
        dy(attn::uniform({s.rows, s.cols}, -1.0, 1.0)),
        gamma(attn::ones({s.cols})),
        beta(attn::zeros({s.cols})),
        targets(attn::from_doubles(spread_targets(s), {s.rows}, attn::DType::Int64)),
        layer_norm(attn::ops::layer_norm(x, gamma, beta, 1e-5)),
        copy_destination(x.shape()) {}

  // Targets spread over all classes.
  static std::vector<double> spread_targets(const KernelShape& s) {
    std::vector<double> t(size_t(s.rows));
    for (int64_t i = 0; i < s.rows; ++i) t[size_t(i)] = double((i * 7919) % s.cols);
    return t;
  }
};

// One timed kernel: what it runs and how many tensor-sized passes over memory it makes.
struct Kernel {
  std::string name;
  double passes;  // tensor bytes read + written, in units of one [rows, cols] float32 tensor
  std::function<void(const KernelInputs&)> run;
};

void copy_parallel(const float* src, float* dst, int64_t n) {
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
    std::memcpy(dst + lo, src + lo, size_t(hi - lo) * sizeof(float));
  }
}

std::vector<Kernel> kernels() {
  namespace ops = attn::ops;
  return {
      {"softmax", 2, [](const KernelInputs& in) { benchmark::DoNotOptimize(ops::softmax(in.x, -1)); }},
      {"log_softmax", 2, [](const KernelInputs& in) { benchmark::DoNotOptimize(ops::log_softmax(in.x, -1)); }},
      {"softmax_backward", 3,
       [](const KernelInputs& in) { benchmark::DoNotOptimize(ops::softmax_backward(in.x, in.dy, -1, false)); }},
      {"layer_norm", 2,
       [](const KernelInputs& in) { benchmark::DoNotOptimize(ops::layer_norm(in.x, in.gamma, in.beta, 1e-5)); }},
      {"layer_norm_backward", 5,  // the dx pass reads x, dy and writes dx; the dgamma/dbeta pass reads x, dy again
       [](const KernelInputs& in) {
         benchmark::DoNotOptimize(
             ops::layer_norm_backward(in.dy, in.x, in.gamma, in.layer_norm.mean, in.layer_norm.rstd, true));
       }},
      {"cross_entropy", 1,
       [](const KernelInputs& in) {
         benchmark::DoNotOptimize(ops::label_smoothed_cross_entropy(in.x, in.targets, 0.1, -1));
       }},
      {"cross_entropy_with_grad", 2,  // reads the logits, writes the gradient
       [](const KernelInputs& in) {
         benchmark::DoNotOptimize(ops::label_smoothed_cross_entropy(in.x, in.targets, 0.1, -1, /*with_grad=*/true));
       }},
      {"memcpy", 2,
       [](const KernelInputs& in) {
         copy_parallel(in.x.data<float>(), in.copy_destination.data<float>(), in.x.numel());
         benchmark::ClobberMemory();
       }},
  };
}

void bench_kernel(benchmark::State& state, Kernel kernel, KernelShape shape, int threads) {
  attn::set_num_threads(threads);
  const KernelInputs inputs(shape);
  for (auto _ : state) kernel.run(inputs);
  state.SetBytesProcessed(int64_t(state.iterations() * kernel.passes * double(shape.rows * shape.cols) * sizeof(float)));
}

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);  // the OpenBLAS kernels and OpenMP waits attnlab itself runs with
  for (const KernelShape& shape : {KernelShape{4096, 512}, KernelShape{4096, 8000}})
    for (int threads : {1, 2})
      for (const Kernel& kernel : kernels()) {
        const std::string name = kernel.name + "/" + shape.name() + "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), bench_kernel, kernel, shape, threads)->UseRealTime();
      }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
