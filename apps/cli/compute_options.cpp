#include "apps/cli/compute_options.hpp"

#include "apps/cli/command.hpp"
#include "core/device_runtime.hpp"
#include "core/error.hpp"
#include "core/matmul_precision.hpp"
#include "core/threads.hpp"

namespace attn::app {

void add_compute_options(CLI::App& cmd, ComputeOptions& options) {
  // 0 in ComputeOptions means "not given"; on the command line a count outside [1, kMaxThreads] is an error.
  cmd.add_option("--threads", options.threads, "Threads (default: OMP_NUM_THREADS or all cores)")
      ->check(thread_count());
  cmd.add_option("--matmul-precision", options.matmul_precision,
                 "fp32, or bf16: large matrix products with bfloat16 operands and float32 sums (~2x faster "
                 "on CPUs with AVX512-BF16)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  cmd.add_option("--device", options.device,
                 "Where the model runs: cpu, or cuda / cuda:N for a GPU (`attnlab info` lists them; under "
                 "mpirun each rank takes the GPU of its local rank when N is left out)")
      ->capture_default_str();
}

Device apply_compute_options(const ComputeOptions& options) {
  ATTN_CHECK(options.threads >= 0, "--threads must be >= 1, got {}", options.threads);
  if (options.threads > 0) set_num_threads(options.threads);
  const Device device = parse_device(options.device);
  use_device(device);
  const MatmulPrecision precision = parse_matmul_precision(options.matmul_precision);
  // On a GPU bf16 products are cuBLAS's fast bf16 mode with float32 storage.
  ATTN_CHECK(precision != MatmulPrecision::BFloat16 || !device.is_cpu() || cpu_has_fast_bf16(),
             "--matmul-precision bf16: this CPU has no bfloat16 dot-product instructions (AVX512-BF16 or AMX); "
             "emulated bf16 products would be slower than fp32, use --matmul-precision fp32");
  set_matmul_precision(precision);
  return device;
}

}  // namespace attn::app
