// Backend registry: the CPU backend is built in (created on first use, so no static
// initialisation order issue); cuda/ registers the CUDA one at start-up.
#include "core/backend.hpp"

#include <array>

#include <fmt/core.h>

#include "core/cpu/cpu_backend.hpp"
#include "core/profiler.hpp"
#include "core/profiling_backend.hpp"

namespace attn {

namespace {

// Every kernel's name, in the order of the Kernel enum.
constexpr std::array<const char*, kKernelCount> kKernelNames = {
#define ATTN_KERNEL(name, params, args) #name,
#include "core/backend_kernels.def"
#undef ATTN_KERNEL
};

static_assert(cpu::CpuBackend::implements_every_kernel(), "the CPU backend is the reference: it implements every kernel");

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

const char* kernel_name(Kernel kernel) { return kKernelNames[size_t(kernel)]; }

void Backend::unsupported(Kernel kernel) const {
  throw Error(fmt::format("the {} backend has no kernel '{}': this operation is not supported on {} tensors", name(),
                          kernel_name(kernel), name()));
}

Backend& backend_for(Device device) {
  Backend& backend = unprofiled_backend_for(device);
  return profiler::enabled() ? profiling_backend(device.type, backend) : backend;
}

void register_backend(DeviceType type, Backend* backend) { registered_backends()[size_t(type)] = backend; }

}  // namespace attn
