// Runs `work` once with the kernel profiler on (core/profiler.hpp) and prints the time and
// call count of every backend kernel it ran: the `--kernels` output of the benchmarks. With
// KernelTiming::device each kernel's run on the device (on a GPU between two events queued
// around it); with host, the host's part of each call, and the waits for the device apart.
#pragma once
#include <fmt/core.h>

#include "core/profiler.hpp"

namespace attn::bench {

template <typename Work>
void print_kernel_times(Work&& work, profiler::KernelTiming timing = profiler::KernelTiming::device) {
  profiler::reset();
  profiler::set_enabled(true, timing);
  work();
  profiler::set_enabled(false);
  for (const profiler::Entry& e : profiler::snapshot())
    fmt::print("    {:<36} {:>7} calls {:>9.2f} ms\n", e.name, e.calls, 1e3 * e.seconds);
}

}  // namespace attn::bench
