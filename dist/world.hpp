// Which world a process trains in, from the launcher and fairseq's --distributed-* flags.
// Under an MPI launcher (mpirun, or srun with PMI/PMIx) the launcher gives the world and each
// process's rank: --distributed-world-size and --distributed-rank, when given, must agree
// with it. With --distributed-init-method (tcp://, env://, file://: fairseq's other
// launchers) the ranks meet there instead, whatever started them (rendezvous.hpp). Without
// either the process is a world of its own.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "dist/communicator.hpp"

namespace attn::dist {

struct WorldOptions {
  std::optional<int> world_size{};  // --distributed-world-size
  std::optional<int> rank{};        // --distributed-rank
  std::string init_method{};        // --distributed-init-method
};

// The world of --distributed-init-method when given, else the MPI world when an MPI launcher
// started this process, else a single process. Throws attn::Error when the flags ask for a
// world that cannot be made.
std::unique_ptr<Communicator> join_world(const WorldOptions& options);
// Throws attn::Error when --distributed-world-size or --distributed-rank contradict `world`.
void check_world_matches(const Communicator& world, const WorldOptions& options);

}  // namespace attn::dist
