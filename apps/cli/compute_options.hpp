// The options of every command that runs the model (train, validate, generate, translate,
// demo): how many threads, and how float32 matrix products are computed
// (core/matmul_precision.hpp). Applied process-wide before the command starts working.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace attn::app {

struct ComputeOptions {
  int threads = 0;                         // 0: OpenMP's default (OMP_NUM_THREADS or all cores)
  std::string matmul_precision = "fp32";  // fp32 | bf16
};

// --threads N and --matmul-precision fp32|bf16.
void add_compute_options(CLI::App& cmd, ComputeOptions& options);

// Sets the thread count and the matmul precision. bf16 on a CPU without bfloat16 dot-product
// instructions is refused with an error saying so (emulated, it would be slower than fp32).
void apply_compute_options(const ComputeOptions& options);

}  // namespace attn::app
