// The collective operations of data-parallel training (docs/design.md §1, "dist/"): every
// rank of a world holds the same model and calls the same collectives in the same order.
// Implementations: one process alone (single_process_communicator.hpp), processes started by
// mpirun (mpi_communicator.hpp) and GPUs (nccl_communicator.hpp, built with NCCL).
//
// Buffers live where the implementation works: host memory for the single-process and MPI
// communicators, device memory for NCCL. Every rank passes the same count (bytes) and root.
// A failed collective throws attn::Error naming the call, the rank and the cause; abort()
// then ends the whole job, so a rank that fails never leaves the others waiting.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace attn::dist {

// A collective that was started and may still be running. Its buffer must stay alive and
// untouched until wait() has returned. Destroying one that has not finished abandons it,
// which only a failing rank does (its error then aborts the job, see above).
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  // Whether it has finished. Also lets the implementation move it on: Open MPI advances a
  // non-blocking collective only while the process is inside some MPI call.
  virtual bool test() = 0;
  // Returns once it has finished; throws attn::Error naming the call if it failed.
  virtual void wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;  // 0 .. size() - 1
  virtual int size() const = 0;
  // This rank's index among the ranks on its own machine (which GPU it takes).
  virtual int local_rank() const { return 0; }
  virtual std::string name() const = 0;  // "single process", "MPI", "NCCL"
  // Whether its buffers are GPU memory (NCCL) rather than host memory.
  virtual bool sums_device_memory() const { return false; }

  // Every rank's `data` becomes the element-wise sum of all the ranks' buffers.
  virtual void all_reduce_sum(float* data, size_t count) = 0;
  virtual void all_reduce_sum(double* data, size_t count) = 0;
  // Starts all_reduce_sum(data, count) and returns without waiting for it (MPI_Iallreduce;
  // NCCL: queued on the communicator's stream), so that the caller can go on computing.
  // Every rank must start the same collectives in the same order. `producer` is the device
  // stream (a cudaStream_t) whose work queued so far writes `data`: the collective runs after
  // it; null for host memory. This default runs all_reduce_sum at once and returns a
  // finished collective (the single-process communicator, which has nothing to do).
  virtual std::unique_ptr<PendingCollective> start_all_reduce_sum(float* data, size_t count, void* producer);
  // Every rank's `data` becomes a copy of `root`'s.
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // Returns once every rank has called it.
  virtual void barrier() = 0;
  // Ends every process of the world with exit status `code`, after printing `reason` on
  // stderr. Never returns.
  [[noreturn]] virtual void abort(const std::string& reason, int code) = 0;
};

// `root`'s string on every rank (host-memory communicators).
std::string broadcast_string(Communicator& world, const std::string& text, int root);

}  // namespace attn::dist
