// See gpu_ranks.hpp.
#include "apps/training/gpu_ranks.hpp"

#include "core/error.hpp"
#ifdef ATTNLAB_WITH_NCCL
#include "dist/nccl_communicator.hpp"
#endif

namespace attn::app {

std::string device_of_rank(const std::string& device, const dist::Communicator& world) {
  return device == "cuda" && world.size() > 1 ? "cuda:" + std::to_string(world.local_rank()) : device;
}

std::shared_ptr<dist::Communicator> gpu_gradient_communicator(dist::Communicator& world, Device device) {
  if (device.is_cpu() || world.size() == 1) return nullptr;
#ifdef ATTNLAB_WITH_NCCL
  return std::make_shared<dist::NcclCommunicator>(world, device.index);
#else
  throw Error(fmt::format("data-parallel training on {}: GPU ranks sum their gradients with NCCL, which this attnlab "
                          "was built without (NCCL is found next to the CUDA toolkit: /usr/local/cuda)",
                          device.str()));
#endif
}

}  // namespace attn::app
