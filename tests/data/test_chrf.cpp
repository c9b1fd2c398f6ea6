// Tests of data/chrf against what sacreBLEU 2.6.0's command line printed (`sacrebleu REF… -i HYP
// -m chrf -w 16 -b` and the flags named in each case) on the segments written here: scores to
// 1e-12, lines byte for byte.
#include <catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "data/chrf.hpp"
#include "data/text_io.hpp"

using namespace attn::data;

namespace {

double sentence_chrf(const std::string& hypothesis, const std::vector<std::string>& references,
                     const ChrfOptions& options) {
  return chrf_compute(chrf_segment_stats(hypothesis, references, options), options);
}

void check_close(double actual, double expected) {
  INFO("actual " << actual << " expected " << expected);
  CHECK(std::abs(actual - expected) <= 1e-12 * std::max(1.0, std::abs(expected)));
}

}  // namespace

TEST_CASE("chrF, chrF++ and epsilon smoothing of one sentence match sacreBLEU") {
  const std::string hypothesis = "The cat sat on the mat.", reference = "The cat is on the mat.";
  check_close(sentence_chrf(hypothesis, {reference}, {}), 67.1727349233023290);
  check_close(sentence_chrf(hypothesis, {reference}, {.word_order = 2}), 69.4369527806934883);
  check_close(sentence_chrf(hypothesis, {reference}, {.eps_smoothing = true}), 67.1721302874421440);
}

TEST_CASE("chrF++ splits one punctuation mark off a word and keeps the best reference") {
  const ChrfOptions plus_plus{.word_order = 2};
  const std::string hypothesis = "(hi) there, Friend!";
  // -cw 2 with one reference each, then both (the second scores higher and is kept), then -cw 2 --chrf-lowercase.
  check_close(sentence_chrf(hypothesis, {"(Hi) here friend."}, plus_plus), 27.8748354966554253);
  check_close(sentence_chrf(hypothesis, {"hi there friend"}, plus_plus), 36.7681490317045174);
  check_close(sentence_chrf(hypothesis, {"(Hi) here friend.", "hi there friend"}, plus_plus), 36.7681490317045174);
  check_close(sentence_chrf(hypothesis, {"(Hi) here friend."}, {.word_order = 2, .lowercase = true}),
              47.0040571524315780);
}

TEST_CASE("chrF lower-cases Unicode and drops or keeps whitespace as sacreBLEU does") {
  const std::string hypothesis = "ΣΊΣΥΦΟΣ  a\tb", reference = "σίσυφος a b";
  check_close(sentence_chrf(hypothesis, {reference}, {.lowercase = true}), 100.0);  // final sigma
  check_close(sentence_chrf(hypothesis, {reference}, {.lowercase = true, .whitespace = true}), 67.8025420198041786);
  check_close(sentence_chrf(hypothesis, {reference}, {.char_order = 3, .whitespace = true}), 15.1727655233966594);
}

TEST_CASE("chrF of an empty hypothesis or reference is 0") {
  CHECK(sentence_chrf("The cat sat on the mat.", {""}, {}) == 0.0);
  CHECK(sentence_chrf("", {"The cat is on the mat."}, {}) == 0.0);
}

TEST_CASE("chrF's name, signature and lines are sacreBLEU's") {
  const ChrfOptions chrf, plus_plus{.word_order = 2, .lowercase = true, .whitespace = true};
  CHECK(chrf_name(chrf) == "chrF2");
  CHECK(chrf_name(plus_plus) == "chrF2++");
  CHECK(chrf_signature(chrf, 1) == "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0");
  CHECK(chrf_signature(plus_plus, 2, true) == "#:2|c:lc|e:yes|nc:6|nw:2|s:yes|v:2.6.0");
  CHECK(chrf_signature({.eps_smoothing = true}, 1) == "nrefs:1|case:mixed|eff:no|nc:6|nw:0|space:no|version:2.6.0");
  CHECK(format_chrf_score(chrf, 59.66, chrf_signature(chrf, 1), 1) ==
        "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0 = 59.7");
  CHECK(format_chrf_score_only(59.66, 2) == "59.66");
}

TEST_CASE("chrF's corpus score comes from the summed statistics") {
  // sacreBLEU with the two reference files: 53.2 (-w 16: 53.1572509273215417).
  const std::vector<std::string> hypotheses = {"The cat sat on the mat.", "Hello world!", "", "(hi) there, friend"};
  const std::vector<std::vector<std::string>> references = {
      {"The cat is on the mat.", "hello World", "something", "(hi) here friend."},
      {"A cat sat on a mat.", "Hello, world!", "", "hi there friend"}};
  check_close(chrf_corpus_score(hypotheses, references, {}), 53.1572509273215417);
  CHECK_THROWS_AS(chrf_corpus_score(hypotheses, {{"one line"}}, {}), DataError);
  CHECK_THROWS_AS(check_chrf_options({.char_order = 0, .word_order = 0}), DataError);
}
