// The peak memory of a run, as `attnlab train` logs it in its "done" record and the demo and
// bench_train report it: the tensor allocator's peak on the run's device (core/allocator.hpp)
// and the process's peak resident set.
#pragma once
#include "core/device.hpp"

namespace attn::app {

struct PeakMemory {
  double tensor_mib = 0.0;    // the device allocator's peak bytes in use, since its last reset_peak()
  double resident_mib = 0.0;  // the process's peak resident set size (getrusage)
};

PeakMemory peak_memory(Device device);

}  // namespace attn::app
