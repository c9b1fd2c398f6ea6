// fairseq's post-processing schemes (data/post_process.hpp): each against what fairseq 3d262bb's
// data_utils.post_process returns for the same text, Unicode whitespace of Python's strip()
// included; an unknown scheme refused.
#include <catch.hpp>

#include "core/error.hpp"
#include "data/post_process.hpp"

using attn::data::post_process;

TEST_CASE("post_process gives fairseq's text for every scheme") {
  const std::string bpe = "Ver@@ bind@@ ung ist gut@@";
  CHECK(post_process(bpe, "subword_nmt") == "Verbindung ist gut");
  CHECK(post_process(bpe, "@@ ") == "Verbindung ist gut");
  CHECK(post_process(bpe, "@@") == "Ver bind ung ist gut");
  CHECK(post_process("\u2581Die \u2581Ver bind ung \u2581ist\u3000", "sentencepiece") == "Die Verbindung ist");
  CHECK(post_process("\u2581 \u2581a b \u2581c \u2581", "sentencepiece") == "ab c");
  CHECK(post_process(" a\u00a0", "sentencepiece") == "a");
  CHECK(post_process("the _ cat s _ sat", "wordpiece") == "the cats sat");
  CHECK(post_process("t h e | c a t |", "letter") == "the cat");
  CHECK(post_process("<SIL> a  <SIL> b   c <SIL>", "silence") == "a b c");
  CHECK(post_process("he llo_EOW wor ld_EOW", "_EOW") == "hello world");
  CHECK(post_process("a@@  b", "none") == "a@@  b");
  CHECK(post_process("a@@  b", "") == "a@@  b");
  CHECK_THROWS_WITH(post_process("a b", "##"), Catch::Contains("unknown post-processing scheme '##'"));
}
