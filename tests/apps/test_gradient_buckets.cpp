// The bucketed gradient all-reduce of data-parallel training (apps/training/gradient_buckets.hpp)
// as rank 1 of 2, rank 0 simulated: which parameters share a bucket (sizes, order, a
// parameter over the cap alone), buckets started during backward as their gradients become
// final and strictly in order, the MPI requests tested meanwhile, the sums, and the flat
// buffer of --ddp-backend no_c10d. The real two-process runs are test_data_parallel.cpp.
#include <catch.hpp>

#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "apps/training/data_parallel.hpp"
#include "apps/training/gradient_buckets.hpp"
#include "autograd/ops.hpp"
#include "dist/single_process_communicator.hpp"

using namespace attn;
using app::assign_buckets;
using Buckets = std::vector<std::vector<size_t>>;

namespace {

constexpr float kPeerGradient = 100.0f;  // every gradient element of the simulated rank 0

// Rank 1 of 2: a started all-reduce adds rank 0's gradients only when waited for, so a buffer
// changed between start and wait would show; each start is recorded.
class RecordingPeer final : public dist::Communicator {
 public:
  std::vector<size_t> started;            // element counts, in start order
  std::function<void()> on_start;         // runs at every start
  int tests = 0;                          // PendingCollective::test() calls

  int rank() const override { return 1; }
  int size() const override { return 2; }
  std::string name() const override { return "recording"; }
  void all_reduce_sum(float* data, size_t count) override { add_peer(data, count); }
  void all_reduce_sum(double* data, size_t count) override {
    for (size_t i = 0; i < count; ++i) data[i] += 1000.0;
  }
  std::unique_ptr<dist::PendingCollective> start_all_reduce_sum(float* data, size_t count, void*) override {
    started.push_back(count);
    if (on_start) on_start();
    return std::make_unique<Pending>(*this, data, count);
  }
  void broadcast(void*, size_t, int) override { FAIL("no broadcast expected"); }
  void barrier() override {}
  [[noreturn]] void abort(const std::string& reason, int) override { FAIL(reason); throw; }

 private:
  static void add_peer(float* data, size_t count) {
    for (size_t i = 0; i < count; ++i) data[i] += kPeerGradient;
  }
  class Pending final : public dist::PendingCollective {
   public:
    Pending(RecordingPeer& peer, float* data, size_t count) : peer_(peer), data_(data), count_(count) {}
    bool test() override {
      ++peer_.tests;
      return false;
    }
    void wait() override {
      if (data_ != nullptr) add_peer(data_, count_);
      data_ = nullptr;
    }

   private:
    RecordingPeer& peer_;
    float* data_;
    size_t count_;
  };
};

Tensor parameter(int64_t n, float value) {
  Tensor t = full({n}, value);
  set_requires_grad(t);
  return t;
}

// Three parameters used in registration order by the forward: a first, c last.
struct Chain {
  Tensor a = parameter(4, 0.5f), b = parameter(4, -0.25f), c = parameter(4, 2.0f);
  std::vector<Tensor> parameters() const { return {a, b, c}; }
  Tensor loss() const {
    const Tensor x = full({4}, 1.5f);
    return sum(tanh(tanh(x * a) * b) * c);
  }
};

// `g` + rank 0's gradient, summed in float32 as the all-reduce does.
std::vector<double> plus_peer(const Tensor& g) {
  std::vector<double> v = g.to_vector();
  for (double& x : v) x = double(float(x) + kPeerGradient);
  return v;
}

}  // namespace

TEST_CASE("bucket assignment: reverse registration order, at most the cap, a larger parameter alone") {
  CHECK(assign_buckets({4, 8, 100, 4, 4}, 12) == Buckets{{4, 3}, {2}, {1, 0}});
  CHECK(assign_buckets({4, 4, 4}, 8) == Buckets{{2, 1}, {0}});  // exactly the cap fits
  CHECK(assign_buckets({4, 8, 100, 4, 4}, std::numeric_limits<size_t>::max()) == Buckets{{4, 3, 2, 1, 0}});
  CHECK(assign_buckets({}, 12).empty());

  app::GradientSyncOptions sync;
  CHECK(sync.overlaps());
  CHECK(sync.bucket_cap_bytes() == 25u * 1024 * 1024);  // fairseq's default, MiB
  sync.ddp_backend = "no_c10d";
  CHECK_FALSE(sync.overlaps());
  CHECK(sync.bucket_cap_bytes() == std::numeric_limits<size_t>::max());
  sync.ddp_backend = "fully_sharded";
  CHECK_THROWS_WITH(sync.validate(), Catch::Contains("--ddp-backend fully_sharded: not supported"));
  sync = {.ddp_backend = "c10d", .bucket_cap_mb = 0};
  CHECK_THROWS_WITH(sync.validate(), Catch::Contains("--bucket-cap-mb must be > 0"));
}

TEST_CASE("gradient buckets: started during backward as they become final, in order; sums after finish") {
  RecordingPeer peer;
  Chain model, reference;
  backward(reference.loss());
  app::GradientBuckets buckets(peer, model.parameters(), 16);  // 4 floats: one parameter each
  REQUIRE(buckets.num_buckets() == 3);
  std::vector<bool> a_final_at_start;
  peer.on_start = [&] { a_final_at_start.push_back(grad(model.a).defined()); };
  backward(model.loss(), Tensor(), [&](const AutogradMeta& leaf) { buckets.on_grad_ready(leaf); });
  CHECK(peer.started == std::vector<size_t>{4, 4, 4});
  // c's bucket started while backward had not yet reached a: communication overlapped it.
  CHECK(a_final_at_start == std::vector<bool>{false, false, true});
  CHECK(peer.tests > 0);  // the started requests were tested (MPI progress) meanwhile
  buckets.finish();
  CHECK(peer.started.size() == 3);  // nothing started twice
  const std::vector<std::pair<Tensor, Tensor>> summed_and_own = {
      {model.a, reference.a}, {model.b, reference.b}, {model.c, reference.c}};
  for (const auto& [p, r] : summed_and_own) CHECK(grad(p).to_vector() == plus_peer(grad(r)));

  SECTION("the next update starts afresh") {
    for (const Tensor& p : model.parameters()) zero_grad(p);
    peer.started.clear();
    backward(model.loss(), Tensor(), [&](const AutogradMeta& leaf) { buckets.on_grad_ready(leaf); });
    buckets.finish();
    CHECK(peer.started == std::vector<size_t>{4, 4, 4});
    CHECK(grad(model.c).to_vector() == plus_peer(grad(reference.c)));
  }
}

TEST_CASE("gradient buckets: a bucket waits for those before it; an unreached parameter adds zeros") {
  RecordingPeer peer;
  Chain model;
  Tensor unused = parameter(2, 1.0f);  // registered last: the first bucket
  const std::vector<Tensor> parameters = {model.a, model.b, model.c, unused};
  app::GradientBuckets buckets(peer, parameters, 16);
  REQUIRE(buckets.num_buckets() == 4);
  backward(model.loss(), Tensor(), [&](const AutogradMeta& leaf) { buckets.on_grad_ready(leaf); });
  CHECK(peer.started.empty());  // the first bucket never became final: none may start before it
  buckets.finish();
  CHECK(peer.started == std::vector<size_t>{2, 4, 4, 4});
  CHECK(grad(unused).to_vector() == std::vector<double>{kPeerGradient, kPeerGradient});
}

TEST_CASE("data parallel: --ddp-backend no_c10d sums one flat buffer after backward; alone nothing is hooked") {
  auto peer = std::make_shared<RecordingPeer>();
  Chain model, reference;
  backward(reference.loss());
  app::DataParallel flat(peer, {.ddp_backend = "no_c10d", .bucket_cap_mb = 25});
  CHECK_FALSE(static_cast<bool>(flat.gradient_ready_hook(model.parameters())));
  backward(model.loss());
  std::vector<double> counts = {1.0, 2.0};
  flat.sum_over_ranks(model.parameters(), counts);
  CHECK(peer->started == std::vector<size_t>{12});
  CHECK(counts == std::vector<double>{1001.0, 1002.0});
  CHECK(grad(model.b).to_vector() == plus_peer(grad(reference.b)));

  app::DataParallel bucketed(peer, {.ddp_backend = "c10d", .bucket_cap_mb = 25});
  CHECK(static_cast<bool>(bucketed.gradient_ready_hook(model.parameters())));
  app::DataParallel alone(std::make_shared<dist::SingleProcessCommunicator>());
  CHECK_FALSE(static_cast<bool>(alone.gradient_ready_hook(model.parameters())));
}
