// See peak_memory.hpp.
#include "apps/training/peak_memory.hpp"

#include <sys/resource.h>

#include "core/allocator.hpp"

namespace attn::app {

PeakMemory peak_memory(Device device) {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return {.tensor_mib = double(allocator_for(device).stats().peak_bytes) / (1 << 20),
          .resident_mib = double(usage.ru_maxrss) / 1024.0};  // ru_maxrss is in KiB on Linux
}

}  // namespace attn::app
