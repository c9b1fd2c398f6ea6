// Runs `work` once with the kernel profiler on (core/profiler.hpp) and prints the time and
// call count of every backend kernel it ran: the `--kernels` output of the benchmarks. With
// wait_for_device each kernel is waited for (its device time); without, the host's part of
// each call is timed, and the waits for the device apart.
#pragma once
#include <fmt/format.h>

#include "core/profiler.hpp"

namespace attn::bench {

template <typename Work>
void print_kernel_times(Work&& work, bool wait_for_device = true) {
  profiler::reset();
  profiler::set_enabled(true, wait_for_device);
  work();
  profiler::set_enabled(false);
  for (const profiler::Entry& e : profiler::snapshot())
    fmt::print("    {:<36} {:>7} calls {:>9.2f} ms\n", e.name, e.calls, 1e3 * e.seconds);
}

}  // namespace attn::bench
