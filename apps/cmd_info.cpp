// `attnlab info`: what this build runs on — threads, the BLAS in use, CUDA devices, and
// the allocator's statistics. The first thing to paste into a bug report.
#include <cblas.h>

#include <fmt/format.h>

#include "apps/command.hpp"
#include "core/allocator.hpp"
#include "core/threads.hpp"
#ifdef ATTNLAB_WITH_CUDA
#include "cuda/device_info.hpp"
#endif

namespace attn::app {
namespace {

int run_info() {
  fmt::print("threads: {} (OpenMP; OpenBLAS shares the pool)\n", get_num_threads());
  fmt::print("blas: {} (core {}, parallel mode {})\n", openblas_get_config(), openblas_get_corename(),
             openblas_get_parallel() == 2 ? "OpenMP" : openblas_get_parallel() == 1 ? "pthreads" : "sequential");
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
