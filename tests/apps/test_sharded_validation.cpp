// Sharded validation (apps/training/evaluation.hpp, evaluate_loss with a world): each of 2
// ranks scores its share of the validation batches, the two shares make the whole split,
// and a rank reports the whole split's numbers once the sums are all-reduced. The 2-process
// run under mpirun is in test_data_parallel.cpp.
#include <catch.hpp>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "synthetic_corpus.hpp"

using namespace attn;
using namespace attn::app;

namespace {

// Rank `rank` of 2: records what it is asked to sum and adds `peer` (rank 0's or 1's sums).
class ShareRecorder final : public dist::Communicator {
 public:
  explicit ShareRecorder(int rank, std::vector<double> peer = {}) : rank_(rank), peer_(std::move(peer)) {}
  std::vector<double> own;  // this rank's sums, as handed to the all-reduce

  int rank() const override { return rank_; }
  int size() const override { return 2; }
  std::string name() const override { return "recorder"; }
  void all_reduce_sum(float*, size_t) override { FAIL("no float all-reduce expected"); }
  void all_reduce_sum(double* data, size_t count) override {
    own.assign(data, data + count);
    for (size_t i = 0; i < peer_.size() && i < count; ++i) data[i] += peer_[i];
  }
  void broadcast(void*, size_t, int) override { FAIL("no broadcast expected"); }
  void barrier() override {}
  [[noreturn]] void abort(const std::string& reason, int) override { FAIL(reason); throw; }

 private:
  int rank_;
  std::vector<double> peer_;
};

}  // namespace

TEST_CASE("sharded validation: 2 ranks score complementary halves of the batches and report the whole split") {
  const std::string root = testing::fresh_temp_dir("sharded_validation");
  testing::write_reversal_corpus(root);
  Trainer trainer(testing::tiny_trainer_options(root, root + "/ck"));
  const nn::LabelSmoothedCrossEntropy criterion(0.1, data::Dictionary::kPad);
  const SplitCorpora valid = open_split(trainer.task(), "valid");
  constexpr int64_t kMaxTokens = 16;  // several batches of the 8 valid pairs
  const ValidationResult whole = evaluate_loss(trainer.model(), valid, criterion, kMaxTokens);
  REQUIRE(whole.nsentences == 8);

  ShareRecorder zero(0), one(1);
  evaluate_loss(trainer.model(), valid, criterion, kMaxTokens, 0, &zero);
  evaluate_loss(trainer.model(), valid, criterion, kMaxTokens, 0, &one);
  REQUIRE(zero.own.size() == 4);  // loss, nll, target tokens, sentences
  REQUIRE(one.own.size() == 4);
  CHECK(zero.own[3] > 0);  // each rank scored some of the batches ...
  CHECK(one.own[3] > 0);
  CHECK(zero.own[3] + one.own[3] == 8);  // ... and together all of them, once
  CHECK(zero.own[2] + one.own[2] == double(whole.ntokens));

  // Rank 1 with rank 0's sums added, as the all-reduce does: the whole split's numbers, up to
  // the order of the float64 sums.
  ShareRecorder reduced(1, zero.own);
  const ValidationResult sharded = evaluate_loss(trainer.model(), valid, criterion, kMaxTokens, 0, &reduced);
  CHECK(sharded.ntokens == whole.ntokens);
  CHECK(sharded.nsentences == whole.nsentences);
  CHECK(sharded.loss == Approx(whole.loss).epsilon(1e-12));
  CHECK(sharded.nll_loss == Approx(whole.nll_loss).epsilon(1e-12));
  CHECK(sharded.ppl == Approx(whole.ppl).epsilon(1e-12));
}
