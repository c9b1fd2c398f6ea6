// Tests of data/ter and data/ter_tokenizer against what sacreBLEU 2.6.0 computed (its command
// line `sacrebleu REF… -i HYP -m ter -w 16` with the flags named in each case, and for words and
// edit counts its TercomTokenizer and translation_edit_rate) on the segments written here.
#include <catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "data/ter.hpp"
#include "data/text_io.hpp"

using namespace attn::data;

namespace {

double sentence_ter(const std::string& hypothesis, const std::vector<std::string>& references,
                    const TerOptions& options = {}) {
  return ter_compute(ter_segment_stats(hypothesis, references, options));
}

void check_close(double actual, double expected) {
  INFO("actual " << actual << " expected " << expected);
  CHECK(std::abs(actual - expected) <= 1e-12 * std::max(1.0, std::abs(expected)));
}

std::vector<std::string> words(const std::string& text) { return ter_words(text, {.case_sensitive = true}); }

}  // namespace

TEST_CASE("TER counts a shift of a run of words as one edit") {
  check_close(sentence_ter("a cat sat mat on the", {"the cat sat on the mat"}), 33.3333333333333286);  // 2 edits
  check_close(sentence_ter("The cat sat on the mat.", {"the cat is on the mat."}), 16.6666666666666643);
  CHECK(ter_edits(words("a b c d e f"), words("d e f a b c")) == 1);
}

TEST_CASE("TER keeps the fewest edits of several references and their mean length") {
  const TerStats stats = ter_segment_stats("The cat sat on the mat.", {"the cat is on the mat.", ""}, {});
  CHECK(stats.edits == 1);
  CHECK(stats.reference_length == 3.0);
  check_close(ter_compute(stats), 33.3333333333333286);
  check_close(sentence_ter("The cat sat on the mat.", {"the cat is on the mat.", "A cat sat on the mat."}),
              16.6666666666666643);
}

TEST_CASE("TER of empty hypotheses and references") {
  CHECK(sentence_ter("", {"the cat"}) == 100.0);
  CHECK(sentence_ter("a b", {""}) == 100.0);  // 2 edits against no reference word
  CHECK(sentence_ter("", {""}) == 0.0);
}

TEST_CASE("TER's beam widens for a reference over 50 times longer than the hypothesis") {
  std::string reference;
  for (int i = 0; i < 120; ++i) reference += (i ? " w" : "w") + std::to_string(i);
  CHECK(ter_segment_stats("w60 w3", {reference}, {}).edits == 119);
}

TEST_CASE("TER's shift search stops after 1000 candidates, dropping that round's shift") {
  // Without the limit sacreBLEU would find 8 edits.
  CHECK(ter_edits(words("b b a a a a a a a a a a b a b b a a a b a a b b a a a b b"),
                  words("a a a b a b a b b b a a b b a a a b a b a a a b b b b b b")) == 9);
  CHECK(ter_edits(words("b a a a b a a a b b b a b a b b b a b a b b b a a a"),
                  words("b b a a b b b a b b a b b a b a b a a a b b a a a b b b")) == 8);
}

TEST_CASE("The Tercom tokenizer lower-cases and splits on Python whitespace") {
  CHECK(ter_words("ΟΔΟΣ  İx\u00a0y\u3000z \x1c w \t", {}) ==
        std::vector<std::string>{"οδος", "i\u0307x", "y", "z", "w"});
  CHECK(ter_words("Ab", {.case_sensitive = true}) == std::vector<std::string>{"Ab"});
}

TEST_CASE("The Tercom tokenizer's normalization as sacreBLEU's --ter-normalized") {
  const TerOptions normalized{.normalized = true};
  CHECK(ter_words("Müller's house.", normalized) == std::vector<std::string>{"müller", "'s", "house", "."});
  CHECK(ter_words("&amp;lt;b&amp;gt; &quot;Hi&quot;", normalized) ==
        std::vector<std::string>{"<", "b", ">", "\"", "hi", "\""});
  CHECK(ter_words("1,000.5 a.b 3-4 x-1 5.- .5, U.S.A.", normalized) ==
        std::vector<std::string>{"1,000.5", "a", ".", "b", "3", "-", "4", "x-1", "5", ".", "-", ".", "5", ",", "u",
                                 ".", "s", ".", "a", "."});
  CHECK(ter_words("He's (here)! {x} [y] a/b @c #d $e", normalized) ==
        std::vector<std::string>{"he", "'s", "(", "here", ")", "!", "{", "x", "}", "[", "y", "]", "a", "/", "b", "@",
                                 "c", "#", "d", "$", "e"});
}

TEST_CASE("The Tercom tokenizer splits CJK characters and removes punctuation as asked") {
  const TerOptions split{.case_sensitive = true, .normalized = true, .asian_support = true};
  CHECK(ter_words("我们的ひらがな。カタカナ、ＡＢＣ！㈠㌀豈︰⺀㇀㐀㼢㼣", split) ==
        std::vector<std::string>{"我", "们", "的", "ひらがな", "。", "カタカナ", "、", "ＡＢＣ", "！", "㈠",
                                 "㌀", "豈", "︰", "⺀", "㇀", "㐀", "㼢", "㼣"});
  const TerOptions no_punct{.no_punct = true, .asian_support = true};
  CHECK(ter_words("Hi, (there)! \"a\" ?:; it's e.g. 我们。「ok」ＡＢ！", no_punct) ==
        std::vector<std::string>{"hi", "there", "a", "it's", "eg", "我们okａｂ"});
  CHECK(ter_words("我们。", {.no_punct = true}) == std::vector<std::string>{"我们。"});
}

TEST_CASE("TER tokenizes references twice, as sacreBLEU does") {
  // The hypothesis's words are `müller's . house`, the reference's `müller 's . house`: 2 edits in 4.
  check_close(sentence_ter("Müller's. House", {"Müller's. House"}, {.normalized = true}), 50.0);
  CHECK(sentence_ter("Müller's. House", {"Müller's. House"}) == 0.0);
}

TEST_CASE("TER's corpus score comes from the summed statistics") {
  // sacreBLEU -m ter -w 16 with the two reference files: 34.7826086956521721 (4 edits in 11.5 mean
  // reference words).
  const std::vector<std::string> hypotheses = {"The cat sat on the mat.", "Hello world!", "", "(hi) there, friend"};
  const std::vector<std::vector<std::string>> references = {
      {"The cat is on the mat.", "hello World", "something", "(hi) here friend."},
      {"A cat sat on a mat.", "Hello, world!", "", "hi there friend"}};
  check_close(ter_corpus_score(hypotheses, references, {}), 34.7826086956521721);
  CHECK_THROWS_AS(ter_corpus_score(hypotheses, {{"one line"}}, {}), DataError);
}

TEST_CASE("TER's signature and lines are sacreBLEU's") {
  CHECK(ter_signature({}, 1) == "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0");
  const TerOptions all{.case_sensitive = true, .normalized = true, .no_punct = true, .asian_support = true};
  CHECK(ter_signature(all, 2, true) == "#:2|c:mixed|t:tercom|nr:yes|pn:no|as:yes|v:2.6.0");
  CHECK(format_ter_score(33.33333, ter_signature({}, 1), 1) ==
        "TER|nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0 = 33.3");
  CHECK(format_ter_score_only(33.33333, 3) == "33.333");
  CHECK(format_ter_json(250.0, "nrefs:1|case:lc", 0) ==
        "{\n \"name\": \"TER\",\n \"score\": 250.0,\n \"signature\": \"nrefs:1|case:lc\",\n \"nrefs\": \"1\",\n"
        " \"case\": \"lc\"\n}");
}
