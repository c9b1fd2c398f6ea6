// See cuda_device_runtime.hpp.
#include "cuda/cuda_device_runtime.hpp"

#include "core/device_runtime.hpp"
#include "core/error.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/device_info.hpp"

namespace attn::cuda {
namespace {

class CudaRuntime final : public DeviceRuntime {
 public:
  std::string unavailable_reason() const override { return cuda::unavailable_reason(); }
  int device_count() const override { return cuda::device_count(); }
  std::string device_name(int index) const override { return cuda::device_name(index); }
  std::string versions() const override { return cuda::versions(); }
  void activate() override {
    ATTN_CHECK(register_cuda_backend(), "CUDA is not usable here: {}", cuda::unavailable_reason());
  }
};

}  // namespace

void install_cuda_runtime() {
  static CudaRuntime runtime;
  install_device_runtime(DeviceType::CUDA, &runtime);
}

}  // namespace attn::cuda
