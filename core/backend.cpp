// Backend registry: the CPU backend is built in (created on first use, so no static
// initialisation order issue); cuda/ registers the CUDA one at start-up.
#include "core/backend.hpp"

#include <array>

#include "core/cpu/cpu_backend.hpp"
#include "core/profiler.hpp"
#include "core/profiling_backend.hpp"

namespace attn {

namespace {

std::array<Backend*, 2>& registered_backends() {
  static std::array<Backend*, 2> backends{};  // by DeviceType
  return backends;
}

Backend& unprofiled_backend_for(Device device) {
  Backend* backend = registered_backends()[size_t(device.type)];
  if (backend == nullptr && device.is_cpu()) {
    static cpu::CpuBackend* cpu_backend = new cpu::CpuBackend;  // never destroyed: usable from static destructors
    return *cpu_backend;
  }
  ATTN_CHECK(backend != nullptr, "no backend for device {}: attnlab was built without CUDA", device.str());
  return *backend;
}

}  // namespace

Backend& backend_for(Device device) {
  Backend& backend = unprofiled_backend_for(device);
  return profiler::enabled() ? profiling_backend(device.type, backend) : backend;
}

void register_backend(DeviceType type, Backend* backend) { registered_backends()[size_t(type)] = backend; }

}  // namespace attn
