// The options of every command that runs the model (train, validate, generate, translate,
// inspect, demo): how many threads, how float32 matrix products are computed
// (core/matmul_precision.hpp), and on which device. Applied process-wide before the command
// starts working.
#pragma once
#include <string>

#include "core/device.hpp"

namespace CLI {
class App;  // <CLI/CLI.hpp>, included only where options are added
}

namespace attn::app {

struct ComputeOptions {
  int threads = 0;                         // 0: OpenMP's default (OMP_NUM_THREADS or all cores)
  std::string matmul_precision = "fp32";  // fp32 | bf16
  std::string device = "cpu";             // cpu | cuda | cuda:N
};

// --threads N, --matmul-precision fp32|bf16 and --device cpu|cuda[:N].
void add_compute_options(CLI::App& cmd, ComputeOptions& options);

// Sets the thread count and the matmul precision, switches the device on and returns it.
// bf16 on a CPU without bfloat16 dot-product instructions is refused with an error saying so
// (emulated, it would be slower than fp32); a device that cannot be used here is refused
// with the reason (core/device_runtime.hpp).
Device apply_compute_options(const ComputeOptions& options);

}  // namespace attn::app
