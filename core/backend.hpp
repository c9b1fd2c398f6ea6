// The kernel interface: everything a device must implement to run attnlab's ops.
// core/cpu/ implements it for the CPU, cuda/ for CUDA GPUs; core/ops.cpp picks the backend
// from the tensors' device at run time, so model code never names a device.
//
// The kernels themselves are listed once, with their contracts, in the kernel table
// core/backend_kernels.def; this header turns the table into Backend's virtual functions
// and the Kernel enum. A backend derives from BackendBase<Self> and overrides the kernels it
// implements: supports() follows from the overrides, and calling a kernel a backend lacks
// throws attn::Error naming the kernel and the backend.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/kernel_params.hpp"
#include "core/parameter_groups.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn {

// One value per entry of the kernel table, named as the kernel (Kernel::softmax).
enum class Kernel {
#define ATTN_KERNEL(name, params, args) name,
#include "core/backend_kernels.def"
#undef ATTN_KERNEL
};
inline constexpr size_t kKernelCount = 0
#define ATTN_KERNEL(name, params, args) +1
#include "core/backend_kernels.def"
#undef ATTN_KERNEL
    ;
// "softmax", "batched_gemm", ...: the name the profiler and error messages use.
const char* kernel_name(Kernel kernel);

// An ordered queue of kernels on one device: kernels queued on one stream run in the order
// they were issued, and the host waits for them only in Backend::synchronize(). `native` is
// the device API's handle (a cudaStream_t on CUDA); it is null on the CPU, whose kernels
// have finished when they return.
struct Stream {
  Device device;
  void* native = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The backend's name in messages: "cpu", "cuda".
  virtual const char* name() const = 0;
  // Whether this backend implements `kernel` (BackendBase derives it from the overrides).
  virtual bool supports(Kernel kernel) const = 0;
  // The stream the kernels on `device` are queued on (one per device).
  virtual Stream stream(Device device) = 0;
  // Blocks the host until every kernel queued so far on this backend's streams has run.
  virtual void synchronize() = 0;

  // The kernels of the table. The base versions only report that the backend lacks them.
#define ATTN_KERNEL(name, params, args) \
  virtual void name params { unsupported(Kernel::name); }
#include "core/backend_kernels.def"
#undef ATTN_KERNEL

 protected:
  // Throws attn::Error: this backend has no `kernel`.
  [[noreturn]] void unsupported(Kernel kernel) const;
};

// The base of every concrete backend Impl (class Impl : public BackendBase<Impl>): a kernel
// is supported exactly when Impl overrides it, so the list cannot drift from the code.
template <class Impl>
class BackendBase : public Backend {
 public:
  bool supports(Kernel kernel) const final { return implemented_kernels()[size_t(kernel)]; }

  // Which kernels Impl overrides, by Kernel value (Impl must be complete where this is used).
  static constexpr std::array<bool, kKernelCount> implemented_kernels() {
    return {
#define ATTN_KERNEL(name, params, args) !std::is_same_v<decltype(&Impl::name), decltype(&Backend::name)>,
#include "core/backend_kernels.def"
#undef ATTN_KERNEL
    };
  }
  static constexpr bool implements_every_kernel() {
    for (bool implemented : implemented_kernels())
      if (!implemented) return false;
    return true;
  }
};

// The backend serving a device; throws when that device type was not built in.
Backend& backend_for(Device device);
void register_backend(DeviceType type, Backend* backend);

}  // namespace attn
