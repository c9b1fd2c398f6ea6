// The world of processes that met through a rendezvous store rather than an MPI launcher
// (--distributed-init-method, rendezvous.hpp), over gloo's TCP transport (Debian's
// libgloo-dev, the CPU collectives PyTorch uses): ring all-reduce, broadcast and barrier on
// host memory, every pair of ranks connected once at the start.
//
// Started all-reduces run one after another on a thread of the communicator's own, so that
// they overlap the caller's backward pass; the blocking collectives first wait for those to
// finish, so every rank issues gloo's operations in the same order. A rank that stops closes
// its connections: the others' next collective fails at once with an attn::Error naming it
// (gloo's "Connection closed by peer"), and a rank that hangs fails them after kTimeout.
// abort() prints the reason and ends this process; the others follow through that error.
#pragma once
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "dist/communicator.hpp"

namespace gloo {
class Context;
}

namespace attn::dist {

class GlooCommunicator final : public Communicator {
 public:
  // How long a collective or the meeting waits for a rank (PyTorch's default, 30 minutes):
  // long enough for rank 0 to write a large checkpoint while the others wait.
  static constexpr std::chrono::minutes kTimeout{30};

  // Meets the other ranks through `store`: each listens on `address` (an IP address or host
  // name of this machine that the others reach; empty: the address of this host's name, or
  // 127.0.0.1 with a warning when the name has none), and every pair connects. Returns once
  // all `size` ranks have met, so the store is no longer needed. GLOO_SOCKET_IFNAME, when set,
  // names the interface instead.
  GlooCommunicator(int rank, int size, gloo::rendezvous::Store& store, const std::string& address);
  ~GlooCommunicator() override;
  GlooCommunicator(const GlooCommunicator&) = delete;
  GlooCommunicator& operator=(const GlooCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  std::string name() const override { return "gloo"; }
  void all_reduce_sum(float* data, size_t count) override;
  void all_reduce_sum(double* data, size_t count) override;
  // Queued for the communicator's thread (host memory; `producer` is not used).
  std::unique_ptr<PendingCollective> start_all_reduce_sum(float* data, size_t count, void* producer) override;
  void broadcast(void* data, size_t bytes, int root) override;
  void barrier() override;
  [[noreturn]] void abort(const std::string& reason, int code) override;

 private:
  class Sequencer;  // the thread that runs started all-reduces in order

  // Runs a gloo operation; its failure becomes an attn::Error naming `what` and this rank.
  void run(const char* what, const std::function<void()>& operation) const;
  template <typename T>
  void sum(T* data, size_t count) const;

  int rank_ = 0, size_ = 1, local_rank_ = 0;
  std::shared_ptr<gloo::Context> context_;
  std::unique_ptr<Sequencer> sequencer_;
};

}  // namespace attn::dist
