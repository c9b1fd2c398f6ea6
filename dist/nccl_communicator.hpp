// The GPU communicator of data-parallel training: NCCL's collectives over one GPU per rank
// (built when the CUDA backend is and /usr/local/cuda has NCCL: ATTNLAB_WITH_NCCL). Its ranks
// are those of a bootstrap communicator (the MPI or gloo world): rank 0 makes NCCL's unique id and the
// bootstrap broadcasts it, then every rank joins with ncclCommInitRank. NCCL picks the
// transport itself (NVLink, PCIe, InfiniBand, sockets).
//
// Buffers are device memory on this rank's GPU. Each call is enqueued on the communicator's
// own stream and waited for, so the buffer may be read as soon as it returns; but
// start_all_reduce_sum returns once it is queued (behind the producer's work) and its
// PendingCollective waits for it. barrier() and
// abort() go through the bootstrap; abort() first aborts the NCCL communicator so that no
// rank stays inside a collective.
#pragma once
#include "dist/communicator.hpp"

namespace attn::dist {

class NcclCommunicator final : public Communicator {
 public:
  // Joins the NCCL world of `bootstrap`'s ranks on GPU number `device` (every rank of
  // `bootstrap` must construct one). `bootstrap` must outlive this communicator.
  NcclCommunicator(Communicator& bootstrap, int device);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return bootstrap_.rank(); }
  int size() const override { return bootstrap_.size(); }
  std::string name() const override { return "NCCL"; }
  bool sums_device_memory() const override { return true; }
  int device() const { return device_; }
  void all_reduce_sum(float* device_data, size_t count) override;
  void all_reduce_sum(double* device_data, size_t count) override;
  // ncclAllReduce queued on the communicator's stream after the work queued so far on
  // `producer` (a cudaStream_t, or null for none).
  std::unique_ptr<PendingCollective> start_all_reduce_sum(float* device_data, size_t count, void* producer) override;
  void broadcast(void* device_data, size_t bytes, int root) override;
  void barrier() override;
  [[noreturn]] void abort(const std::string& reason, int code) override;

 private:
  struct Handles;  // NCCL's communicator and the CUDA stream, kept out of this header
  class PendingEvent;  // the CUDA event recorded after a started collective

  Communicator& bootstrap_;
  int device_;
  Handles* handles_;
};

}  // namespace attn::dist
