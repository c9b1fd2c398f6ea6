// The world of processes an MPI launcher started (Open MPI's mpirun on one machine or on the
// hosts of a hostfile; srun with PMI/PMIx), over MPI_COMM_WORLD: the CPU communicator of
// data-parallel training, and the channel over which NCCL's unique id travels.
//
// Only the thread that created it calls MPI (MPI_THREAD_FUNNELED). Errors are returned, not
// fatal inside MPI, so a failed call becomes an attn::Error naming it; abort() is
// MPI_Abort, which makes the launcher end every rank. A rank that dies without a word (a
// signal) is reported by the launcher itself ("mpirun noticed that process rank 1 ... exited
// on signal 9"), which then ends the others: no rank waits for a dead one.
#pragma once
#include "dist/communicator.hpp"

namespace attn::dist {

// Whether an MPI launcher started this process (it set Open MPI's, PMIx's or PMI's rank).
bool launched_by_mpi();

class MpiCommunicator final : public Communicator {
 public:
  // Joins the launcher's world (MPI_Init_thread); one per process.
  MpiCommunicator();
  // Leaves it (MPI_Finalize).
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  std::string name() const override { return "MPI"; }
  void all_reduce_sum(float* data, size_t count) override;
  void all_reduce_sum(double* data, size_t count) override;
  // MPI_Iallreduce (host memory; `producer` is not used).
  std::unique_ptr<PendingCollective> start_all_reduce_sum(float* data, size_t count, void* producer) override;
  void broadcast(void* data, size_t bytes, int root) override;
  void barrier() override;
  [[noreturn]] void abort(const std::string& reason, int code) override;

 private:
  class PendingRequests;  // the MPI requests of a started collective

  void check(int status, const char* call) const;

  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

}  // namespace attn::dist
