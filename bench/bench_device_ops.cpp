// The matrix products and bias-gradient sums of one transformer-base training step (4,096
// tokens, D 512, FFN 2,048, vocabulary 8,000), one shape at a time, on the CPU or a GPU: where
// a step's device time goes, shape by shape, beside PyTorch's times for the same products.
// Each op runs `reps` times back to back after a warm-up and the device is waited for once at
// the end, so the figure is the op's own throughput with launch gaps hidden. Prints
// microseconds per op and TFLOP/s (products) or GB/s of bytes read and written (sums).
//
// Usage: bench_device_ops [--device cpu|cuda[:N]] [--reps N] [--threads N]
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/cli/runtime_environment.hpp"
#include "bench_args.hpp"
#include "bench_device.hpp"
#include "core/backend.hpp"
#include "core/ops.hpp"
#include "core/threads.hpp"

namespace {

using namespace attn;
using Clock = std::chrono::steady_clock;

constexpr int64_t kTokens = 4096, kModel = 512, kFfn = 2048, kVocab = 8000;
constexpr int64_t kHeadsTimesBatch = 8 * 128, kLength = 32, kHeadWidth = 64;

struct Op {
  std::string name;
  double work;       // floating-point operations, or bytes moved for a sum
  bool is_product;
  std::function<void()> run;
};

// out = a @ b for operands of the given shapes; transposed_a / transposed_b read them from
// [k, m] / [n, k] storage (weights [out, in] and the gradient products' transposes).
Op product(const std::string& name, int64_t batch, int64_t m, int64_t k, int64_t n, bool transposed_a,
           bool transposed_b, Device device) {
  const auto make = [&](int64_t rows, int64_t cols, bool transposed) {
    const Shape stored = batch > 1 ? Shape{batch, transposed ? cols : rows, transposed ? rows : cols}
                                   : Shape{transposed ? cols : rows, transposed ? rows : cols};
    const Tensor t = uniform(stored, -1.0, 1.0, DType::Float32, nullptr, device);
    return transposed ? t.transpose(-2, -1) : t;
  };
  const Tensor a = make(m, k, transposed_a), b = make(k, n, transposed_b);
  const Tensor out(batch > 1 ? Shape{batch, m, n} : Shape{m, n}, DType::Float32, device);
  return {name, 2.0 * double(batch * m * k * n), true, [a, b, out] { ops::matmul_into(a, b, out); }};
}

// The column sums of an [rows, cols] gradient: a bias's gradient.
Op column_sum(const std::string& name, int64_t rows, int64_t cols, Device device) {
  const Tensor x = uniform({rows, cols}, -1.0, 1.0, DType::Float32, nullptr, device);
  return {name, 4.0 * double(rows * cols + cols), false, [x] { (void)ops::sum(x, {0}); }};
}

std::vector<Op> step_ops(Device device) {
  const int64_t N = kTokens, D = kModel, F = kFfn, V = kVocab;
  return {
      // forward: x [N, in] @ Wᵀ, W [out, in]
      product("linear D->D      x Wt", 1, N, D, D, false, true, device),
      product("linear D->3D     x Wt", 1, N, D, 3 * D, false, true, device),
      product("linear D->F      x Wt", 1, N, D, F, false, true, device),
      product("linear F->D      x Wt", 1, N, F, D, false, true, device),
      product("output D->V      x Et", 1, N, D, V, false, true, device),
      // backward: dx = g @ W, dW = gᵀ @ x
      product("dx D<-D          g W", 1, N, D, D, false, false, device),
      product("dx D<-F          g W", 1, N, F, D, false, false, device),
      product("dx F<-D          g W", 1, N, D, F, false, false, device),
      product("dx D<-V          g E", 1, N, V, D, false, false, device),
      product("dW D x D         gt x", 1, D, N, D, true, false, device),
      product("dW F x D         gt x", 1, F, N, D, true, false, device),
      product("dW D x F         gt x", 1, D, N, F, true, false, device),
      product("dE V x D         gt x", 1, V, N, D, true, false, device),
      // attention's backward products, a batch of B·H matrices [T, d]
      product("attn dS K   [BH,T,T][T,d]", kHeadsTimesBatch, kLength, kLength, kHeadWidth, false, false, device),
      product("attn dSt Q  [BH,T,T]t[T,d]", kHeadsTimesBatch, kLength, kLength, kHeadWidth, true, false, device),
      product("attn dO Vt  [BH,T,d][d,T]", kHeadsTimesBatch, kLength, kHeadWidth, kLength, false, true, device),
      column_sum("bias grad [N, D] column sums", N, D, device),
      column_sum("bias grad [N, F] column sums", N, F, device),
  };
}

double seconds_per_run(const Op& op, int reps, Device device) {
  Backend& backend = backend_for(device);
  for (int i = 0; i < 3; ++i) op.run();
  backend.synchronize();
  const auto start = Clock::now();
  for (int i = 0; i < reps; ++i) op.run();
  backend.synchronize();
  return std::chrono::duration<double>(Clock::now() - start).count() / reps;
}

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);
  try {
    bench::BenchArgs args("bench_device_ops", argc, argv);
    const std::string device_text = args.text("device", "cpu");
    const int reps = int(args.number("reps", 20)), threads = int(args.number("threads", 2));
    args.check_all_used();
    const Device device = bench::use_bench_device(device_text);
    set_num_threads(threads);
    fmt::print("{:<30} {:>10} {:>12}\n", fmt::format("on {}", device.str()), "us per op", "rate");
    double product_seconds = 0.0, product_flops = 0.0;
    for (const Op& op : step_ops(device)) {
      const double seconds = seconds_per_run(op, reps, device);
      if (op.is_product) product_seconds += seconds, product_flops += op.work;
      fmt::print("{:<30} {:>10.1f} {:>9.1f} {}\n", op.name, 1e6 * seconds, op.work / seconds / (op.is_product ? 1e12 : 1e9),
                 op.is_product ? "TFLOP/s" : "GB/s");
    }
    fmt::print("{:<30} {:>10.1f} {:>9.1f} TFLOP/s\n", "all products above", 1e6 * product_seconds,
               product_flops / product_seconds / 1e12);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_device_ops: {}\n", e.what());
    return 1;
  }
  return 0;
}
