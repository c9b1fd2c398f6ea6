// A world of one process: every collective leaves its buffer as it is. What `attnlab train`
// uses when no MPI launcher started it.
#pragma once
#include "dist/communicator.hpp"

namespace attn::dist {

class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "single process"; }
  void all_reduce_sum(float*, size_t) override {}
  void all_reduce_sum(double*, size_t) override {}
  void broadcast(void*, size_t, int root) override;
  void barrier() override {}
  [[noreturn]] void abort(const std::string& reason, int code) override;
};

}  // namespace attn::dist
