// `attnlab info`: what this build runs on — threads and their wait policy, the BLAS and
// GEMM libraries in use, whether bf16 matrix products are fast here, CUDA devices, and
// the allocator's statistics. The first thing to paste into a bug report.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstdlib>

#include <fmt/format.h>

#include "apps/cli/command.hpp"
#include "core/allocator.hpp"
#include "core/matmul_precision.hpp"
#include "core/threads.hpp"
#ifdef ATTNLAB_WITH_CUDA
#include "cuda/device_info.hpp"
#endif

namespace attn::app {
namespace {

std::string environment_value(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "unset";
}

int run_info() {
  fmt::print("threads: {} (OpenMP; OpenBLAS and oneDNN share the pool); OMP_WAIT_POLICY {}, GOMP_SPINCOUNT {}\n",
             get_num_threads(), environment_value("OMP_WAIT_POLICY"), environment_value("GOMP_SPINCOUNT"));
  fmt::print("blas: {} (core {}, parallel mode {})\n", openblas_get_config(), openblas_get_corename(),
             openblas_get_parallel() == 2 ? "OpenMP" : openblas_get_parallel() == 1 ? "pthreads" : "sequential");
  const dnnl_version_t* dnnl = dnnl_version();
  fmt::print("gemm: large float32 products via oneDNN {}.{}.{}; bf16 matmul precision {}\n", dnnl->major,
             dnnl->minor, dnnl->patch, cpu_has_fast_bf16() ? "available (AVX512-BF16)" : "not available on this CPU");
#ifdef ATTNLAB_WITH_CUDA
  int n = cuda::device_count();
  fmt::print("cuda: built in; {} device(s)\n", n);
  for (int i = 0; i < n; ++i) fmt::print("  cuda:{} {}\n", i, cuda::device_name(i));
#else
  fmt::print("cuda: not built (configure with -DATTNLAB_CUDA=ON)\n");
#endif
  AllocatorStats s = allocator_for(Device::cpu()).stats();
  fmt::print("cpu allocator: {} bytes in use, peak {}, {} allocations\n", s.current_bytes, s.peak_bytes, s.num_allocs);
  return 0;
}

CommandRegistration info_command("info", "Show threads, BLAS, CUDA devices and memory statistics",
                                 [](CLI::App&) -> CommandAction { return run_info; });

}  // namespace
}  // namespace attn::app
