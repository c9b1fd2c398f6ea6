// Byte-exact checks of the Moses detokenizer port against detokenizer.perl's outputs
// (docs/mt-tools.md §2.4; vectors/own/moses/*.tok-a.detok).
#include <catch.hpp>

#include "data/moses_detokenizer.hpp"
#include "data/text_io.hpp"
#include "moses_vectors.hpp"

using attn::data::MosesDetokenizer;
using attn::data::MosesLanguage;

TEST_CASE("Moses detokenizer matches detokenizer.perl on the own edge and corpus files", "[moses]") {
  for (auto [code, language] : {std::pair{"en", MosesLanguage::English}, std::pair{"de", MosesLanguage::German}}) {
    for (std::string file : {"edge", "corpus"}) {
      std::string tokenized = "own/moses/" + file + "." + code + ".tok-a";
      SECTION(tokenized) {
        MosesDetokenizer detokenizer(language);
        attn::test::check_records(tokenized, tokenized + ".detok",
                                  [&](std::string_view record) { return detokenizer.detokenize_record(record); });
      }
    }
  }
}

TEST_CASE("Moses detokenizer: single rules", "[moses]") {
  MosesDetokenizer english(MosesLanguage::English);
  MosesDetokenizer german(MosesLanguage::German);
  CHECK(english.detokenize("don &apos;t say &quot; hi &quot; , ok ?") == "don't say \"hi\", ok?");
  CHECK(german.detokenize("don &apos;t") == "don 't");
  CHECK(english.detokenize("the Jones &apos; house") == "the Jones' house");
  CHECK(english.detokenize("E @-@ Mail ( $ 5 )") == "E-Mail ($5)");
  CHECK(english.detokenize("中 文 text") == "中文 text");
  CHECK(english.detokenize_record("<seg id=1>\n") == "<seg id=1>\n");
  CHECK(english.detokenize_record("  ") == "  ");
  CHECK(english.detokenize_record("a , b") == "a, b\n");
}

TEST_CASE("Moses detokenizer rejects invalid UTF-8", "[moses]") {
  MosesDetokenizer detokenizer;
  CHECK_THROWS_WITH(detokenizer.detokenize("ok \xFF"), Catch::Contains("invalid UTF-8 at byte 4"));
}

TEST_CASE("Moses detokenizer: the rules of fr, it, cs, fi and ko", "[moses]") {
  // detokenizer.perl -l LANG's outputs.
  auto detokenize = [](const char* code, std::string_view line) {
    return MosesDetokenizer(attn::data::parse_moses_language(code)).detokenize(line);
  };
  CHECK(detokenize("fr", "L&apos; homme a dit : « oui ! » ( 5 % ) ?") == "L'homme a dit : « oui ! » (5 %) ?");
  CHECK(detokenize("fr", "a ( ? b") == "a ( ? b");
  CHECK(detokenize("it", "dell&apos; arte e l&apos; anno .") == "dell'arte e l'anno.");
  CHECK(detokenize("cs", "„ Je - li to 3 , 14 nebo 2 . 5 ? “ e - mail je - li") ==
        "„Je-li to 3,14 nebo 2.5?“ e-mail je - li");
  CHECK(detokenize("fi", "EU : ssa ja USA : N ja EU : Hän , kello 3 : 30") == "EU:ssa ja USA:n ja EU:hän, kello 3: 30");
  CHECK(detokenize("ko", "한 국 어 中 文") == "한 국 어 中 文");
  CHECK(detokenize("en", "한 국 어 中 文") == "한국어中文");
}
