// Tests of apps/generation/attention_alignment (generate --print-alignment, fairseq's A- lines).
// Hard: each output token goes to the source token of largest attention, pads and </s> excluded on
// both sides and not counted in the indices; the first of equal weights wins; a source or
// target of </s> alone aligns nothing; an attention of the wrong shape is refused.
#include <catch.hpp>

#include "apps/generation/attention_alignment.hpp"
#include "core/error.hpp"

using namespace attn;
using namespace attn::app;

namespace {

constexpr int64_t kPad = 1, kEos = 2;

}  // namespace

TEST_CASE("hard_alignment takes each target word's most attended source word, skipping pads and </s>") {
  // Source 7 8 9 </s>, left-padded by one: columns pad, 7, 8, 9, </s>. Target 5 6 4 </s>.
  const std::vector<int64_t> source = {7, 8, 9, kEos}, target = {5, 6, 4, kEos};
  const Tensor attention = from_vector(std::vector<float>{0.0f, 0.1f, 0.2f, 0.6f, 0.1f,   // 5 -> 9
                                                          0.0f, 0.1f, 0.1f, 0.0f, 0.8f,   // 6: </s> skipped; 7 (tie)
                                                          0.5f, 0.1f, 0.3f, 0.1f, 0.0f,   // 4: pad skipped -> 8
                                                          0.0f, 0.9f, 0.0f, 0.0f, 0.1f},  // </s>: not aligned
                                       {4, 5});
  const std::vector<AlignedPair> alignment = hard_alignment(attention, source, target, kPad, kEos);
  REQUIRE(alignment.size() == 3);
  CHECK(format_alignment(alignment) == "2-0 0-1 1-2");
}

TEST_CASE("hard_alignment aligns nothing without words, and refuses an attention of another shape") {
  const Tensor uniform = from_vector(std::vector<float>(4, 0.5f), {2, 2});
  CHECK(hard_alignment(uniform, {kEos}, {5, kEos}, kPad, kEos).empty());      // the source is </s> alone
  CHECK(hard_alignment(from_vector(std::vector<float>{0.5f, 0.5f}, {1, 2}), {4, kEos}, {kEos}, kPad, kEos).empty());
  CHECK(format_alignment({}).empty());
  CHECK_THROWS_AS(hard_alignment(uniform, {4, 5, kEos}, {5, kEos}, kPad, kEos), Error);  // 3 source tokens, 2 columns
  CHECK_THROWS_AS(hard_alignment(uniform, {4, kEos}, {5, 6, kEos}, kPad, kEos), Error);  // 3 target tokens, 2 rows
}

TEST_CASE("format_soft_alignment prints every target row's weights over the source, padding left out") {
  // Source 7 </s>, left-padded by one: columns pad, 7, </s>. Target 5 </s>.
  const Tensor attention = from_vector(std::vector<float>{0.0f, 0.25f, 0.75f,  //
                                                          0.0f, 1.0f, 0.0f},
                                       {2, 3});
  CHECK(format_soft_alignment(attention, {7, kEos}, {5, kEos}) == "0.250000,0.750000 1.000000,0.000000");
  CHECK_THROWS_AS(format_soft_alignment(attention, {7, 8, 9, kEos}, {5, kEos}), Error);  // more source than columns
}
