// A Backend decorator that times every kernel call under the kernel's name
// (core/profiler.hpp) and forwards it to the real backend. backend_for() hands it out
// instead of the real backend only while the profiler is enabled, so an unprofiled run
// never goes through it. Calls a kernel makes internally to its own backend are not seen.
#pragma once
#include "core/backend.hpp"

namespace attn {

// The profiling decorator of `inner` (one per device type, created on first use).
Backend& profiling_backend(DeviceType type, Backend& inner);

}  // namespace attn
