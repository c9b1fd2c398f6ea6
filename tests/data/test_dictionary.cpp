// fairseq Dictionary (docs/mt-tools.md §4): byte-exact dict.txt against vectors/own/fairseq/.
#include <catch.hpp>

#include "data/dictionary.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using attn::data::DataError;
using attn::data::Dictionary;
using attn::test::read_file;

namespace {

const std::string kVectors = attn::test::vector_path("own/");
const std::string kEnglish = kVectors + "bpe/corpus.bpe200.en";
const std::string kGerman = kVectors + "bpe/corpus.bpe200.de";

std::string expected_dict(const std::string& name) { return read_file(kVectors + "fairseq/" + name); }

}  // namespace

TEST_CASE("dictionary starts with the four specials", "[dictionary]") {
  Dictionary dictionary;
  REQUIRE(dictionary.size() == 4);
  CHECK(dictionary.symbol(0) == "<s>");
  CHECK(dictionary.symbol(1) == "<pad>");
  CHECK(dictionary.symbol(2) == "</s>");
  CHECK(dictionary.symbol(3) == "<unk>");
  CHECK(dictionary.to_text().empty());
}

TEST_CASE("built dictionaries are byte-exact with fairseq", "[dictionary]") {
  struct Case {
    std::vector<std::string> files;
    int64_t threshold, nwords, padding;
    std::string expected;
  };
  for (const Case& c : {Case{{kEnglish, kGerman}, 0, -1, 8, "dict.joined.thr0.nwords-1.pad8.txt"},
                        Case{{kEnglish, kGerman}, 0, -1, 1, "dict.joined.thr0.nwords-1.pad1.txt"},
                        Case{{kEnglish, kGerman}, 0, 100, 8, "dict.joined.thr0.nwords100.pad8.txt"},
                        Case{{kEnglish, kGerman}, 3, -1, 8, "dict.joined.thr3.nwords-1.pad8.txt"},
                        Case{{kEnglish}, 0, -1, 8, "dict.en-only.thr0.pad8.txt"},
                        Case{{kGerman}, 0, -1, 8, "dict.de-only.thr0.pad8.txt"}}) {
    INFO(c.expected);
    for (int workers : {1, 3}) {
      Dictionary built = attn::data::build_dictionary(c.files, c.threshold, c.nwords, c.padding, workers);
      CHECK(built.to_text() == expected_dict(c.expected));
    }
  }
  // Input-file order does not matter.
  CHECK(attn::data::build_dictionary({kGerman, kEnglish}, 0, -1, 8).to_text() ==
        expected_dict("dict.joined.thr0.nwords-1.pad8.txt"));
}

TEST_CASE("finalize pads, limits and breaks ties by code point", "[dictionary]") {
  Dictionary dictionary;
  dictionary.add_line("b a „ “ a b c");
  dictionary.add_line("c d");
  Dictionary padded = dictionary;
  padded.finalize(-1, -1, 8);
  CHECK(padded.to_text() == "a 2\nb 2\nc 2\nd 1\n“ 1\n„ 1\nmadeupword0000 0\nmadeupword0001 0\n"
                            "madeupword0002 0\nmadeupword0003 0\nmadeupword0004 0\nmadeupword0005 0\n");
  CHECK(padded.size() == 16);  // 4 specials + 6 symbols padded to a multiple of 8
  CHECK(padded.count(Dictionary::kEos) == 2);  // one </s> per line, not written
  Dictionary limited = dictionary;
  limited.finalize(2, 6, 1);
  CHECK(limited.to_text() == "a 2\nb 2\n");
}

TEST_CASE("padding skips a madeupword the text already holds, as fairseq does", "[dictionary]") {
  Dictionary dictionary;
  dictionary.add_line("b madeupword0000 a");
  dictionary.finalize(-1, -1, 8);
  // 4 specials + 3 symbols: madeupword0000 is there (its count stays 1), so 0001 pads to 8.
  CHECK(dictionary.to_text() == "a 1\nb 1\nmadeupword0000 1\nmadeupword0001 0\n");
  CHECK(dictionary.size() == 8);
}

TEST_CASE("a target-first joined dictionary starts with the target dictionary", "[dictionary]") {
  Dictionary target, source;
  target.add_line("die Katze die 42");
  target.finalize(-1, -1, 8);  // die 42 Katze madeupword0000
  source.add_line("the cat the mouse 42 42");
  source.finalize(-1, -1, 1);  // 42 the cat mouse
  const Dictionary joined = attn::data::target_first_joined_dictionary(target, source, 8);
  for (int32_t id = 0; id < int32_t(target.size()); ++id) CHECK(joined.symbol(id) == target.symbol(id));
  // A shared symbol keeps its target id, once; the padding goes on after the target's.
  CHECK(joined.to_text() ==
        "die 2\n42 1\nKatze 1\nmadeupword0000 0\nthe 2\ncat 1\nmouse 1\nmadeupword0001 0\nmadeupword0002 0\n"
        "madeupword0003 0\nmadeupword0004 0\nmadeupword0005 0\n");
  CHECK(joined.size() == 16);
  CHECK(joined.count(Dictionary::kEos) == 1);
}

TEST_CASE("the vector dictionaries load with id = line + 3 and save identically", "[dictionary]") {
  std::string path = kVectors + "fairseq/dict.joined.thr0.nwords-1.pad8.txt";
  Dictionary dictionary = Dictionary::load(path);
  REQUIRE(dictionary.size() == 336);
  CHECK(dictionary.symbol(4) == ".");
  CHECK(dictionary.count(4) == 400);
  CHECK(dictionary.index("a@@") == 5);
  CHECK(dictionary.symbol(335) == "madeupword0006");
  CHECK(dictionary.index("never-seen") == Dictionary::kUnk);
  CHECK(dictionary.to_text() == read_file(path));

  attn::test::TempDir tmp;
  const std::string out = tmp.file("dict.txt");
  dictionary.save(out);
  CHECK(read_file(out) == read_file(path));
}

TEST_CASE("encode_line maps unknowns to <unk>, counts them and appends </s>", "[dictionary]") {
  Dictionary dictionary = Dictionary::parse("the 5\ncat 3\nsat 1\n", "inline");
  auto encoded = dictionary.encode_line("  the\tdog sat\xC2\xA0" "cat <unk> ");
  CHECK(encoded.ids == std::vector<int32_t>{4, 3, 6, 5, 3, 2});
  CHECK(encoded.unknown_tokens == 1);  // a literal <unk> is not counted as replaced
  CHECK(dictionary.encode_line("", true).ids == std::vector<int32_t>{2});
  CHECK(dictionary.encode_line("cat", false).ids == std::vector<int32_t>{5});
}

TEST_CASE("split_on_whitespace follows Python str.split", "[dictionary]") {
  using attn::data::split_on_whitespace;
  auto tokens = split_on_whitespace(" a\xE2\x80\x83" "b\xE3\x80\x80" "c\x1f" "d\xE2\x80\x8B" "e\xC2\x85 ");
  // U+2003, U+3000, \x1f and U+0085 split; U+200B (zero width space) does not.
  CHECK(tokens == std::vector<std::string_view>{"a", "b", "c", "d\xE2\x80\x8B" "e"});
}

TEST_CASE("decode skips specials and removes the BPE separator", "[dictionary]") {
  Dictionary dictionary = Dictionary::parse("Hal@@ 1\nlo 1\nWelt 1\n", "inline");
  std::vector<int64_t> ids{0, 4, 5, 6, 1, 2};
  CHECK(dictionary.decode(ids) == "Hal@@ lo Welt");
  CHECK(dictionary.decode(ids, "@@ ") == "Hallo Welt");
  CHECK(dictionary.decode(ids, "", true) == "Hal@@ lo Welt </s>");
  CHECK(dictionary.decode(std::vector<int64_t>{4}, "@@ ") == "Hal");
  CHECK(dictionary.decode(std::vector<int64_t>{3}) == "<unk>");
  CHECK_THROWS_AS(dictionary.decode(std::vector<int64_t>{7}), DataError);
}

TEST_CASE("dict.txt loading errors name file:line", "[dictionary]") {
  CHECK_THROWS_WITH(Dictionary::parse("a 1\nnocount\n", "d.txt"), Catch::Contains("d.txt:2") && Catch::Contains("nocount"));
  CHECK_THROWS_WITH(Dictionary::parse("a 1\n\n", "d.txt"), Catch::Contains("d.txt:2"));
  CHECK_THROWS_WITH(Dictionary::parse("a x1\n", "d.txt"), Catch::Contains("d.txt:1") && Catch::Contains("x1"));
  CHECK_THROWS_WITH(Dictionary::parse("a 1\nb 2\na 3\n", "d.txt"), Catch::Contains("d.txt:3") && Catch::Contains("duplicate"));
  CHECK_THROWS_WITH(Dictionary::parse("</s> 3\n", "d.txt"), Catch::Contains("d.txt:1"));
  CHECK_THROWS_WITH(Dictionary::load("/nonexistent/dict.txt"), Catch::Contains("/nonexistent/dict.txt"));
  CHECK_THROWS_WITH(Dictionary::parse("a 1\nb -3\n", "d.txt"), Catch::Contains("d.txt:2: negative count '-3'"));
  CHECK_THROWS_WITH(Dictionary::parse("\xEF\xBB\xBF" "a 1\n", "d.txt"), Catch::Contains("d.txt:1:") && Catch::Contains("byte order mark"));
}

TEST_CASE("dict.txt overwrite flag, spaces in symbols, trailing whitespace", "[dictionary]") {
  Dictionary dictionary = Dictionary::parse("a 1\nx y 2  \r\na 7 #fairseq:overwrite\n", "d.txt");
  REQUIRE(dictionary.size() == 7);
  CHECK(dictionary.symbol(5) == "x y");
  CHECK(dictionary.index("a") == 6);
  CHECK(dictionary.count(6) == 7);
}

TEST_CASE("dict.txt lines end at \\n, \\r\\n or a lone \\r, as fairseq reads them", "[dictionary]") {
  Dictionary dictionary = Dictionary::parse("a 5\rb 3\r\nc 1\n", "d.txt");
  REQUIRE(dictionary.size() == 7);
  CHECK(dictionary.symbol(4) == "a");
  CHECK(dictionary.count(4) == 5);
  CHECK(dictionary.symbol(5) == "b");
  CHECK(dictionary.symbol(6) == "c");
  // Two lone \r in a row leave an empty line between them: an error in fairseq too.
  CHECK_THROWS_WITH(Dictionary::parse("a 5\r\rb 3\n", "d.txt"), Catch::Contains("d.txt:2"));
}

TEST_CASE("dict.txt counts are read as Python's int() reads them", "[dictionary]") {
  Dictionary dictionary = Dictionary::parse("a 1_0\nb \t5\nc +1_0\nd -0\ne 007\n", "d.txt");
  REQUIRE(dictionary.size() == 9);
  CHECK(dictionary.count(4) == 10);
  CHECK(dictionary.count(5) == 5);
  CHECK(dictionary.count(6) == 10);
  CHECK(dictionary.count(7) == 0);
  CHECK(dictionary.count(8) == 7);
  for (const char* text : {"a 1__0\n", "a _1\n", "a 1_\n", "a +_1\n", "a 0x5\n", "a \t\n"})
    CHECK_THROWS_WITH(Dictionary::parse(text, "d.txt"), Catch::Contains("d.txt:1"));
}
