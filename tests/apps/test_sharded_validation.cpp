// Sharded validation (apps/training/evaluation.hpp, evaluate_loss with a world): each of 2
// ranks scores its share of the validation batches, the two shares make the whole split,
// and a rank reports the whole split's numbers once the sums are all-reduced. The 2-process
// run under mpirun is in test_data_parallel.cpp.
#include <catch.hpp>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "share_recorder.hpp"
#include "synthetic_corpus.hpp"

using namespace attn;
using namespace attn::app;


TEST_CASE("sharded validation: 2 ranks score complementary halves of the batches and report the whole split") {
  const std::string root = testing::fresh_temp_dir("sharded_validation");
  testing::write_reversal_corpus(root);
  Trainer trainer(testing::tiny_trainer_options(root, root + "/ck"));
  const nn::LabelSmoothedCrossEntropy criterion(0.1, data::Dictionary::kPad);
  const SplitCorpora valid = open_split(trainer.task(), "valid");
  constexpr int64_t kMaxTokens = 16;  // several batches of the 8 valid pairs
  const ValidationResult whole = evaluate_loss(trainer.model(), valid, criterion, kMaxTokens);
  REQUIRE(whole.nsentences == 8);

  testing::ShareRecorder zero(0), one(1);
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
  testing::ShareRecorder reduced(1, zero.own);
  const ValidationResult sharded = evaluate_loss(trainer.model(), valid, criterion, kMaxTokens, 0, &reduced);
  CHECK(sharded.ntokens == whole.ntokens);
  CHECK(sharded.nsentences == whole.nsentences);
  CHECK(sharded.loss == Approx(whole.loss).epsilon(1e-12));
  CHECK(sharded.nll_loss == Approx(whole.nll_loss).epsilon(1e-12));
  CHECK(sharded.ppl == Approx(whole.ppl).epsilon(1e-12));
}
