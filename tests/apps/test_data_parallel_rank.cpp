// DataParallel (apps/training/data_parallel.hpp) as rank 1 of 2, its peer scripted: which
// batch slots it owns, the gradient sum (a missing gradient counts as zeros, every
// parameter has one afterwards), rank 0's stop decision, and the start-state check that
// refuses a rank whose state differs from rank 0's. The real two-process runs are
// tests/apps/test_data_parallel.cpp.
#include <catch.hpp>

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "apps/training/data_parallel.hpp"
#include "autograd/autograd.hpp"
#include "dist/communicator.hpp"

using namespace attn;

namespace {

// Rank 1 of a world of 2 whose rank 0 is scripted: all-reduces add rank 0's `peer_*`
// values, broadcasts from rank 0 deliver the queued byte strings in order.
class ScriptedPeer final : public dist::Communicator {
 public:
  std::vector<float> peer_floats;
  std::vector<double> peer_doubles;
  std::deque<std::string> broadcasts_from_zero;

  int rank() const override { return 1; }
  int size() const override { return 2; }
  std::string name() const override { return "scripted"; }
  void all_reduce_sum(float* data, size_t count) override {
    REQUIRE(count == peer_floats.size());
    for (size_t i = 0; i < count; ++i) data[i] += peer_floats[i];
  }
  void all_reduce_sum(double* data, size_t count) override {
    REQUIRE(count == peer_doubles.size());
    for (size_t i = 0; i < count; ++i) data[i] += peer_doubles[i];
  }
  void broadcast(void* data, size_t bytes, int root) override {
    REQUIRE(root == 0);
    REQUIRE_FALSE(broadcasts_from_zero.empty());
    REQUIRE(broadcasts_from_zero.front().size() == bytes);
    std::memcpy(data, broadcasts_from_zero.front().data(), bytes);
    broadcasts_from_zero.pop_front();
  }
  void barrier() override {}
  [[noreturn]] void abort(const std::string& reason, int) override { FAIL(reason); throw; }

  // Queues `text` as broadcast_string sends it: its length, then its bytes.
  void queue_string(const std::string& text) {
    const uint64_t length = text.size();
    broadcasts_from_zero.emplace_back(reinterpret_cast<const char*>(&length), sizeof length);
    if (length > 0) broadcasts_from_zero.push_back(text);
  }
};

Tensor parameter(std::vector<float> values) {
  Tensor t = empty(Shape{int64_t(values.size())});
  std::memcpy(t.data<float>(), values.data(), values.size() * sizeof(float));
  set_requires_grad(t);
  return t;
}

}  // namespace

TEST_CASE("data parallel as rank 1 of 2: slots, gradient sums, rank 0's stop, the start-state check") {
  auto peer = std::make_shared<ScriptedPeer>();
  app::DataParallel parallel(peer);
  CHECK_FALSE(parallel.is_writer());
  CHECK_FALSE(parallel.owns(0));
  CHECK(parallel.owns(1));
  CHECK(parallel.owns(5));

  SECTION("gradients and counts are summed; a parameter without a gradient gets rank 0's") {
    Tensor a = parameter({1.0f, 2.0f}), b = parameter({3.0f});
    set_grad(a, parameter({0.5f, -1.0f}).data_only());
    peer->peer_floats = {30.0f, 10.0f, 20.0f};  // rank 0's gradients of b and a: reverse registration order
    peer->peer_doubles = {100.0, 7.0};
    std::vector<double> counts = {1.0, 2.0};
    parallel.sum_over_ranks({a, b}, counts);
    CHECK(grad(a).to_vector() == std::vector<double>{10.5, 19.0});
    CHECK(grad(b).to_vector() == std::vector<double>{30.0});
    CHECK(counts == std::vector<double>{101.0, 9.0});
  }

  SECTION("rank 0's stop decision is this rank's") {
    peer->queue_string("reached --max-time-minutes 1");
    CHECK(parallel.agree(std::nullopt) == std::optional<std::string>("reached --max-time-minutes 1"));
    peer->queue_string("");
    CHECK(parallel.agree(std::string("my own clock says stop")) == std::nullopt);
  }

  SECTION("a state that differs from rank 0's is an error on every rank, naming both") {
    peer->queue_string("update 10");
    peer->peer_doubles = {0.0};  // rank 0 found no difference of its own
    CHECK_NOTHROW(parallel.check_same_state([] { return std::string("update 10"); }, "resumed from x"));
    peer->queue_string("update 10");
    CHECK_THROWS_WITH(parallel.check_same_state([] { return std::string("update 0"); }, "nothing to resume from"),
                      Catch::Contains("rank 0: update 10; rank 1: update 0, nothing to resume from") &&
                          Catch::Contains("--save-dir"));
    peer->queue_string("update 0");
    peer->peer_doubles = {1.0};  // another rank differed: this one stops too
    CHECK_THROWS_WITH(parallel.check_same_state([] { return std::string("update 0"); }, "nothing to resume from"),
                      Catch::Contains("do not start from the same state"));
  }
}
