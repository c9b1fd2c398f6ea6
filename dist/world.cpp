// See world.hpp.
#include "dist/world.hpp"

#include "core/error.hpp"
#include "dist/mpi_communicator.hpp"
#include "dist/rendezvous.hpp"
#include "dist/single_process_communicator.hpp"

namespace attn::dist {

std::unique_ptr<Communicator> join_world(const WorldOptions& options) {
  if (!options.init_method.empty()) return meet(plan_rendezvous(options.init_method, options.world_size, options.rank));
  if (launched_by_mpi()) return std::make_unique<MpiCommunicator>();
  const int world_size = options.world_size.value_or(1);
  ATTN_CHECK(world_size == 1,
             "--distributed-world-size {}: this process was not started by an MPI launcher; start the {} ranks with "
             "`mpirun -np {} attnlab train ...` (several machines: mpirun --hostfile FILE), or start each yourself "
             "with --distributed-init-method tcp://HOST:PORT and its --distributed-rank",
             world_size, world_size, world_size);
  ATTN_CHECK(options.rank.value_or(0) == 0,
             "--distributed-rank {}: a process started without an MPI launcher or --distributed-init-method is rank 0 "
             "of a world of one",
             *options.rank);
  return std::make_unique<SingleProcessCommunicator>();
}

void check_world_matches(const Communicator& world, const WorldOptions& options) {
  ATTN_CHECK(!options.world_size || *options.world_size == world.size(),
             "--distributed-world-size {} contradicts the launcher, which started {} ranks (mpirun -np {})",
             *options.world_size, world.size(), world.size());
  ATTN_CHECK(!options.rank || *options.rank == world.rank(),
             "--distributed-rank {} contradicts the launcher, which made this process rank {} (under mpirun leave "
             "--distributed-rank out: every rank gets the same command line)",
             *options.rank, world.rank());
}

}  // namespace attn::dist
