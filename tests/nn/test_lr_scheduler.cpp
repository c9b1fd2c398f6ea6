// Tests for nn/lr_scheduler: the numeric anchors of docs/models.md §8 and the formulas of §1.8.
#include <catch.hpp>

#include <cmath>
#include <numbers>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "nn/lr_scheduler.hpp"

using namespace attn::nn;
using Catch::Matchers::Contains;

namespace {

Approx rel(double expected, double epsilon = 1e-5) { return Approx(expected).epsilon(epsilon).margin(0); }

InverseSqrtScheduler vaswani_inverse_sqrt() { return InverseSqrtScheduler({.lr = 1e-3, .warmup_updates = 4000, .warmup_init_lr = 1e-7}); }

CosineScheduler lightconv_cosine() {
  return CosineScheduler({.max_lr = 1e-3, .min_lr = 1e-7, .warmup_updates = 10000, .warmup_init_lr = 1e-7,
                          .lr_period_updates = 20000, .t_mult = 1, .lr_shrink = 1});
}

CosineScheduler baevski_cosine() {
  return CosineScheduler({.max_lr = 1.0, .min_lr = 1e-4, .warmup_updates = 16000, .warmup_init_lr = 1e-7,
                          .lr_period_updates = 270000, .t_mult = 2, .lr_shrink = 0.75});
}

}  // namespace

TEST_CASE("inverse_sqrt matches the §8 anchors", "[lr_scheduler]") {
  InverseSqrtScheduler s = vaswani_inverse_sqrt();
  CHECK(s.lr() == rel(1e-7));
  CHECK(s.lr_at(0) == rel(1e-7));
  CHECK(s.lr_at(1) == rel(3.49975e-7));
  CHECK(s.lr_at(2000) == rel(5.00050e-4));
  CHECK(s.lr_at(4000) == rel(1e-3));
  CHECK(s.lr_at(16000) == rel(5e-4));
  CHECK(s.lr_at(30000) == rel(3.65148e-4));
}

TEST_CASE("inverse_sqrt: step_update hands out schedule(n) and warmup_init_lr defaults to 0", "[lr_scheduler]") {
  InverseSqrtScheduler s({.lr = 7e-4, .warmup_updates = 100});
  CHECK(s.lr() == 0.0);
  CHECK(s.step_update(50) == rel(3.5e-4, 1e-12));
  CHECK(s.lr() == rel(3.5e-4, 1e-12));
  CHECK(s.step_update(400) == rel(7e-4 * std::sqrt(100.0 / 400.0), 1e-12));
  CHECK(s.step_begin_epoch(3) == s.lr());  // epochs do not move an update-based schedule
}

TEST_CASE("inverse_sqrt rejects zero warmup and a negative or NaN lr", "[lr_scheduler]") {
  CHECK_THROWS_WITH(InverseSqrtScheduler({.lr = 1e-3, .warmup_updates = 0}), Contains("--warmup-updates"));
  CHECK_THROWS_WITH(InverseSqrtScheduler({.lr = -1e-3, .warmup_updates = 10}), Contains("--lr") && Contains(">= 0"));
  CHECK_THROWS_WITH(InverseSqrtScheduler({.lr = std::nan(""), .warmup_updates = 10}), Contains("--lr"));
  CHECK_THROWS_WITH(InverseSqrtScheduler({.lr = 1e-3, .warmup_updates = 10, .warmup_init_lr = std::nan("")}),
                    Contains("--warmup-init-lr"));
  CHECK_NOTHROW(InverseSqrtScheduler({.lr = 0.0, .warmup_updates = 10}));  // a frozen run stays possible
}

TEST_CASE("cosine matches the LightConv anchors of §8", "[lr_scheduler]") {
  CosineScheduler s = lightconv_cosine();
  CHECK(s.lr() == rel(1e-7));
  CHECK(s.lr_at(5000) == rel(5.00050e-4));
  CHECK(s.lr_at(10000) == rel(1e-3));
  CHECK(s.lr_at(20000) == rel(5.00050e-4));
  CHECK(s.lr_at(29999) == rel(1.00006e-7));
  CHECK(s.lr_at(30000) == rel(1e-3));  // restart
}

TEST_CASE("cosine matches the Baevski LM anchors of §8", "[lr_scheduler]") {
  CosineScheduler s = baevski_cosine();
  CHECK(s.lr_at(16000) == rel(1.0));
  CHECK(s.lr_at(151000) == rel(0.50005));
  CHECK(s.lr_at(285999) == rel(1.0e-4, 1e-3));
  CHECK(s.lr_at(286000) == rel(0.75));  // restart, shrunk once
}

TEST_CASE("cosine with t_mult 2: the second cycle is twice as long and shrunk", "[lr_scheduler]") {
  CosineScheduler s({.max_lr = 1.0, .min_lr = 0.1, .warmup_updates = 0, .lr_period_updates = 10, .t_mult = 2,
                     .lr_shrink = 0.5});
  // Cycle 1 covers updates 10..29 (length 20); its middle is update 20.
  const double mid_second = 0.5 * 0.1 + 0.5 * (0.5 * 1.0 - 0.5 * 0.1);
  CHECK(s.lr_at(20) == rel(mid_second, 1e-12));
  CHECK(s.lr_at(30) == rel(0.25, 1e-12));  // cycle 2 starts at 0.5² · max
  CHECK(s.lr_at(5) == rel(0.1 + 0.45 * (1 + std::cos(std::numbers::pi * 5 / 10)), 1e-12));
}

TEST_CASE("cosine: warmup starts at min_lr by default and the period defaults to max_update - warmup",
          "[lr_scheduler]") {
  CosineScheduler s({.max_lr = 1e-3, .min_lr = 1e-5, .warmup_updates = 10, .lr_period_updates = -1,
                     .max_update = 110});
  CHECK(s.lr() == rel(1e-5, 1e-12));
  CHECK(s.lr_at(60) == rel(1e-5 + 0.5 * (1e-3 - 1e-5), 1e-12));  // half of the 100-update period
  CHECK_THROWS_WITH(CosineScheduler({.max_lr = 1e-3, .lr_period_updates = 0, .max_update = 0}),
                    Contains("--max-update"));
  CHECK_THROWS_WITH(CosineScheduler({.max_lr = 1e-3, .min_lr = -1e-2, .lr_period_updates = 5}), Contains("min lr"));
  CHECK_THROWS_WITH(CosineScheduler({.max_lr = 1e-3, .warmup_init_lr = std::nan(""), .lr_period_updates = 5}),
                    Contains("--warmup-init-lr"));
  CHECK_THROWS_WITH(CosineScheduler({.max_lr = 1e-3, .lr_period_updates = 5, .lr_shrink = std::nan("")}),
                    Contains("--lr-shrink"));
  CHECK_THROWS_WITH(CosineScheduler({.max_lr = 1e-3, .lr_period_updates = 5, .lr_shrink = -0.5}),
                    Contains("--lr-shrink") && Contains("-0.5"));
}

TEST_CASE("cosine: a floor at or above the peak is lowered to it, so each cycle is flat", "[lr_scheduler]") {
  // Values from fairseq's cosine schedule with --lr 1e-3 --min-lr 1e-2 (and 1e-3), which it accepts.
  CosineScheduler above({.max_lr = 1e-3, .min_lr = 1e-2, .warmup_updates = 4, .lr_period_updates = 5});
  CHECK(above.lr() == 1e-3);  // the warmup starts at the lowered floor
  for (int64_t n : {0, 3, 4, 8}) CHECK(above.lr_at(n) == rel(1e-3, 1e-12));
  for (int64_t n : {9, 13}) CHECK(above.lr_at(n) == rel(1e-4, 1e-12));
  CHECK(above.lr_at(14) == rel(1e-5, 1e-12));
  CosineScheduler equal({.max_lr = 1e-3, .min_lr = 1e-3, .lr_period_updates = 5, .lr_shrink = 0.5});
  for (int64_t n : {0, 4}) CHECK(equal.lr_at(n) == rel(1e-3, 1e-12));
  for (int64_t n : {5, 9}) CHECK(equal.lr_at(n) == rel(5e-4, 1e-12));
  CHECK(equal.lr_at(10) == rel(2.5e-4, 1e-12));
}

TEST_CASE("fixed: per-epoch lrs, force-anneal and warmup follow fairseq", "[lr_scheduler]") {
  FixedScheduler s({.lr = {1.0, 0.5}, .force_anneal = 4, .lr_shrink = 0.1, .warmup_updates = 4});
  CHECK(s.lr() == rel(0.25, 1e-12));  // epoch lr 1.0 scaled by 1/W before update 1
  s.step_begin_epoch(1);
  CHECK(s.step_update(0) == rel(0.25, 1e-12));
  CHECK(s.step_update(1) == rel(0.5, 1e-12));  // (n+1)/W
  CHECK(s.step_update(3) == rel(1.0, 1e-12));
  CHECK(s.step_update(4) == rel(1.0, 1e-12));
  s.step_begin_epoch(2);
  CHECK(s.step_update(10) == rel(0.5, 1e-12));
  CHECK(s.epoch_lr(3) == rel(0.5, 1e-12));  // the last value repeats
  CHECK(s.epoch_lr(4) == rel(0.05, 1e-12));  // annealing: lr[-1] · shrink^(epoch + 1 - force_anneal)
  CHECK(s.epoch_lr(5) == rel(0.005, 1e-12));
  CHECK_THROWS_WITH(FixedScheduler({.lr = {}}), Contains("--lr"));
  CHECK_THROWS_WITH(FixedScheduler({.lr = {1e-3, -2.0}}), Contains("--lr") && Contains("-2"));
  // A negative shrink would flip the lr's sign every other epoch, a NaN one poison the weights.
  CHECK_THROWS_WITH(FixedScheduler({.lr = {1e-3}, .force_anneal = 2, .lr_shrink = -1}), Contains("--lr-shrink"));
  CHECK_THROWS_WITH(FixedScheduler({.lr = {1e-3}, .force_anneal = 2, .lr_shrink = std::nan("")}),
                    Contains("--lr-shrink"));
  CHECK_THROWS_WITH(FixedScheduler({.lr = {1e-3}, .force_anneal = -1}), Contains("--force-anneal"));
}

TEST_CASE("scheduler state round-trips through JSON and continues identically", "[lr_scheduler]") {
  FixedScheduler a({.lr = {1.0, 0.5}, .warmup_updates = 10});
  a.step_begin_epoch(2);
  a.step_update(3);
  const std::string saved = a.state_dict().dump();

  FixedScheduler b({.lr = {1.0, 0.5}, .warmup_updates = 10});
  b.load_state_dict(nlohmann::json::parse(saved));
  CHECK(b.lr() == a.lr());
  CHECK(b.step_update(4) == a.step_update(4));
  CHECK(b.step_begin_epoch(3) == a.step_begin_epoch(3));

  CosineScheduler c = lightconv_cosine();
  c.step_update(12345);
  CosineScheduler d = lightconv_cosine();
  d.load_state_dict(c.state_dict());
  CHECK(d.lr() == c.lr());
}

TEST_CASE("loading another schedule's state is rejected", "[lr_scheduler]") {
  InverseSqrtScheduler s = vaswani_inverse_sqrt();
  CosineScheduler c = lightconv_cosine();
  CHECK_THROWS_WITH(c.load_state_dict(s.state_dict()), Contains("inverse_sqrt") && Contains("cosine"));
  CHECK_THROWS_WITH(s.load_state_dict(nlohmann::json{{"name", "inverse_sqrt"}}), Contains("'lr'"));
  CHECK_THROWS_AS(s.load_state_dict(nlohmann::json::array()), attn::Error);
}

namespace {

// The lr of updates 1..total when the trainer drives `s` (begin each epoch of `per_epoch`
// updates, step_update after each update, step(epoch, metric) at each epoch's end), with
// `metrics[e - 1]` measured at the end of epoch e.
std::vector<double> drive(LRScheduler& s, int64_t total, int64_t per_epoch, const std::vector<double>& metrics = {}) {
  std::vector<double> lrs;
  int64_t epoch = 1;
  s.step_begin_epoch(epoch);
  double lr = s.step_update(0);
  for (int64_t n = 1; n <= total; ++n) {
    lrs.push_back(lr);
    lr = s.step_update(n);
    if (n % per_epoch == 0) {
      s.step(epoch, metrics.empty() ? 1.0 : metrics[size_t(epoch - 1) % metrics.size()]);
      s.step_update(n);
      s.step_begin_epoch(++epoch);
      lr = s.step_update(n);
    }
  }
  return lrs;
}

// Expected values below are the lrs fairseq's own schedule classes gave for the same calls.
void check_lrs(const std::vector<double>& got, const std::vector<double>& fairseq) {
  REQUIRE(got.size() == fairseq.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("update " << i + 1);
    CHECK(got[i] == rel(fairseq[i], 1e-12));
  }
}

}  // namespace

TEST_CASE("polynomial_decay: warmup to lr, then (lr - end)·remaining^power + end, then end", "[lr_scheduler]") {
  PolynomialDecayScheduler s(
      {.lr = {1e-3}, .end_learning_rate = 1e-5, .power = 2.0, .total_num_update = 20, .warmup_updates = 4});
  check_lrs(drive(s, 22, 5),
            {0.0, 0.00025, 0.0005, 0.00075, 0.001, 0.0008801171875, 0.00076796875, 0.0006635546875, 0.000566875,
             0.0004779296875, 0.00039671875000000004, 0.0003232421875, 0.0002575, 0.0001994921875, 0.00014921875,
             0.0001066796875, 7.1875e-05, 4.48046875e-05, 2.546875e-05, 1.38671875e-05, 1e-05, 1e-05});
}

TEST_CASE("polynomial_decay: a --lr list is indexed by the 1-based epoch, the last value repeating",
          "[lr_scheduler]") {
  PolynomialDecayScheduler s({.lr = {0.1, 0.05, 0.02}, .total_num_update = 30});
  const std::vector<double> lrs = drive(s, 30, 10);
  CHECK(lrs[0] == rel(0.05, 1e-12));                    // epoch 1 takes lr[1]
  CHECK(lrs[10] == rel(0.013333333333333336, 1e-12));   // epoch 2: lr[2] · (1 - 10/30)
  CHECK(lrs[20] == rel(0.006666666666666668, 1e-12));   // epoch 3: lr[2] again
  CHECK(lrs[29] == rel(0.0006666666666666665, 1e-12));
}

TEST_CASE("polynomial_decay: from --force-anneal on, each epoch decays again from the lr it begins with",
          "[lr_scheduler]") {
  PolynomialDecayScheduler s({.lr = {1e-3}, .force_anneal = 2, .total_num_update = 30});
  const std::vector<double> lrs = drive(s, 30, 10);
  CHECK(lrs[9] == rel(0.0007, 1e-12));
  CHECK(lrs[10] == rel(0.0004444444444444446, 1e-12));  // 0.0007·(2/3) decayed again at update 10
  CHECK(lrs[19] == rel(0.0002444444444444445, 1e-12));
  CHECK(lrs[20] == rel(7.40740740740741e-05, 1e-12));
  CHECK(lrs[29] == rel(7.407407407407408e-06, 1e-12));
}

TEST_CASE("polynomial_decay: a resume inside an annealing epoch does not begin the epoch again", "[lr_scheduler]") {
  const PolynomialDecayOptions options{.lr = {1e-3}, .force_anneal = 1, .total_num_update = 30};
  PolynomialDecayScheduler a(options);
  a.step_begin_epoch(1);
  a.step_update(7);
  PolynomialDecayScheduler b(options);
  b.load_state_dict(nlohmann::json::parse(a.state_dict().dump()));
  b.step_begin_epoch(1);  // the trainer begins the epoch it resumes in
  CHECK(b.step_update(7) == a.step_update(7));
  CHECK(b.step_update(8) == a.step_update(8));
  CHECK(b.step_begin_epoch(2) == a.step_begin_epoch(2));
  CHECK(b.step_update(10) == a.step_update(10));
}

TEST_CASE("polynomial_decay refuses a decay without a length and bad values", "[lr_scheduler]") {
  CHECK_THROWS_WITH(PolynomialDecayScheduler({.lr = {1e-3}}), Contains("--total-num-update") && Contains("--max-update"));
  CHECK_THROWS_WITH(PolynomialDecayScheduler({.lr = {1e-3}, .end_learning_rate = -1, .total_num_update = 10}),
                    Contains("--end-learning-rate"));
  CHECK_THROWS_WITH(PolynomialDecayScheduler({.lr = {1e-3}, .power = std::nan(""), .total_num_update = 10}),
                    Contains("--power"));
}

TEST_CASE("reduce_lr_on_plateau: warmup, then a shrink after more than patience epochs without a relative gain",
          "[lr_scheduler]") {
  // Epoch 1 ends inside the warmup and is not counted; 4.47 after 4.5 is within the 1% threshold.
  ReduceLROnPlateauScheduler s({.lr = 1e-3, .lr_threshold = 1e-2, .lr_patience = 1, .warmup_updates = 3});
  check_lrs(drive(s, 16, 2, {5.0, 4.96, 4.9, 4.9, 4.5, 4.47, 4.47, 4.0}),
            {0.0, 0.0003333333333333333, 0.0006666666666666666, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001,
             0.001, 0.001, 0.001, 0.0001, 0.0001});
}

TEST_CASE("reduce_lr_on_plateau: maximising (BLEU), and no shrink of 1e-8 or less", "[lr_scheduler]") {
  ReduceLROnPlateauScheduler up({.lr = 1e-3, .lr_shrink = 0.5, .maximize = true});
  check_lrs(drive(up, 10, 2, {20.0, 20.001, 21.0, 21.0, 19.0}),
            {0.001, 0.001, 0.001, 0.001, 0.0005, 0.0005, 0.0005, 0.0005, 0.00025, 0.00025});
  ReduceLROnPlateauScheduler tiny({.lr = 2e-8});
  check_lrs(drive(tiny, 6, 1, {3.0}), {2e-08, 2e-08, 2e-09, 2e-09, 2e-09, 2e-09});
  CHECK_THROWS_WITH(ReduceLROnPlateauScheduler({.lr = 1e-3, .lr_shrink = 1.0}), Contains("--lr-shrink"));
  CHECK_THROWS_WITH(ReduceLROnPlateauScheduler({.lr = 1e-3, .lr_patience = -1}), Contains("--lr-patience"));
}

TEST_CASE("reduce_lr_on_plateau: the best value, bad-epoch count and lr survive a state round trip",
          "[lr_scheduler]") {
  const ReduceLROnPlateauOptions options{.lr = 1e-3, .lr_patience = 2, .warmup_updates = 2};
  ReduceLROnPlateauScheduler a(options);
  a.step_update(2);  // the end of the warmup: lr
  a.step_update(3);  // past it: plateaus count from now
  a.step(1, 5.0);
  a.step(2, 6.0);
  a.step(3, 6.0);  // two bad epochs: one more shrinks the lr
  ReduceLROnPlateauScheduler b(options);
  b.load_state_dict(nlohmann::json::parse(a.state_dict().dump()));
  CHECK(b.lr() == a.lr());
  CHECK(b.step(4, 4.9999) == a.step(4, 4.9999));  // not a 1e-4 relative gain over 5.0
  CHECK(b.lr() == rel(1e-4, 1e-12));
  // A fresh schedule's best is infinite: JSON has no infinity, the state writes null.
  ReduceLROnPlateauScheduler c(options), d(options);
  d.load_state_dict(nlohmann::json::parse(c.state_dict().dump()));
  for (int64_t n : {2, 3}) CHECK(d.step_update(n) == c.step_update(n));
  CHECK(d.step(1, 1e300) == c.step(1, 1e300));
  CHECK(d.step(2, 1e300) == c.step(2, 1e300));
  CHECK(d.step(3, 1e300) == c.step(3, 1e300));
}
