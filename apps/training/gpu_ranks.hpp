// Data-parallel training on GPUs (README "Several processes and machines"): one rank per
// GPU, started like CPU ranks (mpirun, or --distributed-init-method). Each rank takes the GPU
// of its local rank (its place among the ranks of its machine), and the gradients are summed
// by NCCL on the GPUs, while the MPI or gloo world keeps carrying the control messages (stop
// decisions, state checks, counts).
#pragma once
#include <memory>
#include <string>

#include "core/device.hpp"
#include "dist/communicator.hpp"

namespace attn::app {

// `--device cuda` (no index) in a world of several ranks means "cuda:<local rank>"; any
// other value is kept as given.
std::string device_of_rank(const std::string& device, const dist::Communicator& world);

// The NCCL communicator over `world`'s ranks on `device` when several ranks train on GPUs;
// null when the gradients stay with `world` (CPU ranks, or a single process). Throws when GPU
// ranks need NCCL and this build has none.
std::shared_ptr<dist::Communicator> gpu_gradient_communicator(dist::Communicator& world, Device device);

}  // namespace attn::app
