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
