// apps/training/gpu_ranks.hpp: which GPU a rank takes, and that CPU ranks and a single
// process keep their gradients with the world (no NCCL communicator is made for them).
#include <catch.hpp>

#include "apps/training/gpu_ranks.hpp"
#include "core/error.hpp"
#include "dist/single_process_communicator.hpp"

using namespace attn;
using namespace attn::app;

namespace {

// A world of `size` ranks seen from one rank on its machine (only its numbers are asked).
class WorldView final : public dist::Communicator {
 public:
  WorldView(int size, int local_rank) : size_(size), local_rank_(local_rank) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  std::string name() const override { return "view"; }
  void all_reduce_sum(float*, size_t) override { FAIL("no collective expected"); }
  void all_reduce_sum(double*, size_t) override { FAIL("no collective expected"); }
  void broadcast(void*, size_t, int) override { FAIL("no collective expected"); }
  void barrier() override { FAIL("no collective expected"); }
  [[noreturn]] void abort(const std::string& reason, int) override { throw Error(reason); }

 private:
  int size_, local_rank_;
};

}  // namespace

TEST_CASE("each GPU rank takes the GPU of its local rank unless one is named", "[data_parallel]") {
  CHECK(device_of_rank("cuda", WorldView(4, 3)) == "cuda:3");
  CHECK(device_of_rank("cuda", WorldView(1, 0)) == "cuda");  // one process: cuda means cuda:0
  CHECK(device_of_rank("cuda:1", WorldView(4, 3)) == "cuda:1");
  CHECK(device_of_rank("cpu", WorldView(4, 3)) == "cpu");
}

TEST_CASE("CPU ranks and a single process sum gradients with the world itself", "[data_parallel]") {
  WorldView cpu_ranks(2, 1);
  CHECK(gpu_gradient_communicator(cpu_ranks, Device::cpu()) == nullptr);
  dist::SingleProcessCommunicator alone;
  CHECK(gpu_gradient_communicator(alone, Device::cuda(0)) == nullptr);
}
