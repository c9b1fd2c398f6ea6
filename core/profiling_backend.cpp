// Kernel timing decorator (core/profiling_backend.hpp).
#include "core/profiling_backend.hpp"

#include <array>
#include <memory>

#include "core/profiler.hpp"

namespace attn {
namespace {

using profiler::ProfileScope;

// Forwards every kernel of the table to `inner` inside a scope named after the kernel. The
// scope waits for the kernel to finish (synchronize) unless the profiler was told not to, so
// on a device whose kernels run asynchronously it times the kernel, not its launch; on the
// CPU that wait is free. Without the wait it times the host's part of each call.
class ProfilingBackend final : public Backend {
 public:
  explicit ProfilingBackend(Backend& inner) : in_(inner) {}

  const char* name() const override { return in_.name(); }
  bool supports(Kernel kernel) const override { return in_.supports(kernel); }
  Stream stream(Device device) override { return in_.stream(device); }
  void synchronize() override {
    ProfileScope scope("wait for the device");
    in_.synchronize();
  }

#define ATTN_KERNEL(name, params, args) \
  void name params override {           \
    ProfileScope scope(#name);          \
    in_.name args;                      \
    if (profiler::waits_for_device())   \
      in_.synchronize();                \
  }
#include "core/backend_kernels.def"
#undef ATTN_KERNEL

 private:
  Backend& in_;
};

}  // namespace

Backend& profiling_backend(DeviceType type, Backend& inner) {
  static std::array<std::unique_ptr<ProfilingBackend>, 2>* decorators =
      new std::array<std::unique_ptr<ProfilingBackend>, 2>;  // never destroyed, like the backends
  std::unique_ptr<ProfilingBackend>& slot = (*decorators)[size_t(type)];
  if (!slot) slot = std::make_unique<ProfilingBackend>(inner);
  return *slot;
}

}  // namespace attn
