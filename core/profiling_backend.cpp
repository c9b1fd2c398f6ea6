// Kernel timing decorator (core/profiling_backend.hpp).
#include "core/profiling_backend.hpp"

#include <array>
#include <memory>

#include "core/profiler.hpp"

namespace attn {
namespace {

using profiler::ProfileScope;

// Forwards every kernel of the table to `inner`, timed under the kernel's name as the
// profiler's KernelTiming says: device times between two stamps of the device's clock where
// it has one, else a scope around the call that waits for the kernel to finish (free on the
// CPU); host times a scope around the call alone.
class ProfilingBackend final : public Backend {
 public:
  ProfilingBackend(DeviceType type, Backend& inner) : type_(type), in_(inner) {}

  const char* name() const override { return in_.name(); }
  bool supports(Kernel kernel) const override { return in_.supports(kernel); }
  Stream stream(Device device) override { return in_.stream(device); }
  void synchronize() override {
    ProfileScope scope("wait for the device");
    in_.synchronize();
  }

#define ATTN_KERNEL(name, params, args) \
  void name params override {           \
    timed(#name, [&] { in_.name args; }); \
  }
#include "core/backend_kernels.def"
#undef ATTN_KERNEL

 private:
  template <typename Call>
  void timed(const char* kernel, Call&& call) {
    profiler::DeviceClock* clock = nullptr;
    if (profiler::kernel_timing() == profiler::KernelTiming::device) clock = profiler::device_clock(type_);
    if (clock != nullptr) {
      const int64_t from = clock->mark();
      call();
      profiler::add_device_span(kernel, *clock, from, clock->mark());
      return;
    }
    ProfileScope scope(kernel);
    call();
    if (profiler::kernel_timing() == profiler::KernelTiming::device) in_.synchronize();
  }

  DeviceType type_;
  Backend& in_;
};

}  // namespace

Backend& profiling_backend(DeviceType type, Backend& inner) {
  static std::array<std::unique_ptr<ProfilingBackend>, 2>* decorators =
      new std::array<std::unique_ptr<ProfilingBackend>, 2>;  // never destroyed, like the backends
  std::unique_ptr<ProfilingBackend>& slot = (*decorators)[size_t(type)];
  if (!slot) slot = std::make_unique<ProfilingBackend>(type, inner);
  return *slot;
}

}  // namespace attn
