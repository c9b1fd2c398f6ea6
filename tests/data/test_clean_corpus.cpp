// clean-corpus-n.perl: line cleaning, the drop rules and the file-level behaviour
// (docs/mt-tools.md §2.5). Expected outputs written by hand from the script's rules (no
// upstream vectors exist for this script).
#include <catch.hpp>

#include <filesystem>
#include <fstream>

#include "data/clean_corpus.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using attn::data::clean_corpus;
using attn::data::clean_corpus_line;
using attn::data::CleanCorpusOptions;
using attn::data::judge_pair;
using attn::data::PairVerdict;
using attn::test::read_file;
using attn::test::TempDir;
using attn::test::write_file;

namespace {


CleanCorpusOptions limits(size_t min_words, size_t max_words, double max_ratio = 9) {
  CleanCorpusOptions options;
  options.min_words = min_words;
  options.max_words = max_words;
  options.max_ratio = max_ratio;
  return options;
}

std::string repeat(const std::string& piece, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

}  // namespace

TEST_CASE("clean-corpus: a line is squeezed on Unicode whitespace and loses its bars", "[clean_corpus]") {
  CHECK(clean_corpus_line("  hello \t  world  ", false) == "hello world");
  CHECK(clean_corpus_line("keep\r", false) == "keep");
  // NBSP and THIN SPACE are \s on decoded text: they split words.
  CHECK(clean_corpus_line("x\u00A0y\u2009z", false) == "x y z");
  CHECK(clean_corpus_line("a|b | c", false) == "ab c");
  CHECK(clean_corpus_line("a|N  b|V", true) == "a|N b|V");
  CHECK(clean_corpus_line(" \t ", false).empty());
}

TEST_CASE("clean-corpus: drop rules", "[clean_corpus]") {
  CHECK(judge_pair("a b", "c", limits(1, 80)) == PairVerdict::Keep);
  CHECK(judge_pair("", "c", limits(1, 80)) == PairVerdict::Empty);
  CHECK(judge_pair("c", "", limits(0, 80)) == PairVerdict::Empty);
  // MIN and MAX are inclusive, on either side.
  CHECK(judge_pair("a b c", "a b c", limits(1, 3)) == PairVerdict::Keep);
  CHECK(judge_pair("a b c d", "a b c", limits(1, 3)) == PairVerdict::Length);
  CHECK(judge_pair("a b", "a b c d", limits(1, 3)) == PairVerdict::Length);
  CHECK(judge_pair("a", "a b", limits(2, 3)) == PairVerdict::Length);
  // Ratio: strictly greater than R drops, both ways (default 9).
  CHECK(judge_pair("w", repeat("w ", 8) + "w", limits(1, 80)) == PairVerdict::Keep);
  CHECK(judge_pair("w", repeat("w ", 9) + "w", limits(1, 80)) == PairVerdict::Ratio);
  CHECK(judge_pair(repeat("w ", 9) + "w", "w", limits(1, 80)) == PairVerdict::Ratio);
  CHECK(judge_pair("a b", "a b c", limits(1, 250, 1.5)) == PairVerdict::Keep);
  CHECK(judge_pair("a b", "a b c d", limits(1, 250, 1.5)) == PairVerdict::Ratio);
  // Words of more than 1000 characters, counted in code points.
  CHECK(judge_pair(repeat("ä", 1000), "b", limits(1, 80)) == PairVerdict::Keep);
  CHECK(judge_pair("a", repeat("x", 1001) + " b", limits(1, 80)) == PairVerdict::LongWord);
  // '|' separates factors, so it ends a word.
  CHECK(judge_pair(repeat("x", 600) + "|" + repeat("y", 600), "b", limits(1, 80)) == PairVerdict::Keep);
}

TEST_CASE("clean-corpus: files in, kept pairs and counts out", "[clean_corpus]") {
  TempDir scratch;
  const auto& dir = scratch.dir;
  write_file(dir / "c.en",
        "  hello \t  world  \na|b c\nx\u00A0y\n\none\n" + repeat("w ", 9) + "w\n" + repeat("w ", 8) + "w\n" +
            repeat("ä", 1000) + "\n" + repeat("x", 1001) + " b\na b c d e f\nkeep\r\n");
  write_file(dir / "c.de", "hallo welt\na b\nx y\nleer\n\nw\nw\nlang\nb\na\nkeep\n");
  const std::string out = (dir / "out").string();

  auto report = clean_corpus((dir / "c").string(), "en", "de", out, limits(1, 5));
  CHECK(read_file(out + ".en") == "hello world\nab c\nx y\n" + repeat("ä", 1000) + "\nkeep\n");
  CHECK(read_file(out + ".de") == "hallo welt\na b\nx y\nlang\nkeep\n");
  CHECK(report.input_pairs == 11);
  CHECK(report.kept_pairs == 5);
  CHECK(report.dropped_pairs() == 6);
  CHECK(report.empty == 2);
  CHECK(report.out_of_length == 3);
  CHECK(report.over_ratio == 0);
  CHECK(report.long_word == 1);

  report = clean_corpus((dir / "c").string(), "en", "de", out, limits(1, 10));
  CHECK(read_file(out + ".de") == "hallo welt\na b\nx y\nw\nlang\na\nkeep\n");
  CHECK(report.kept_pairs == 7);
  CHECK(report.over_ratio == 1);
}

TEST_CASE("clean-corpus: a '|' on the first line marks a factored corpus", "[clean_corpus]") {
  TempDir scratch;
  const auto& dir = scratch.dir;
  write_file(dir / "f.en", "a|N b|V\nc|N  d|V\n");
  write_file(dir / "f.de", "x\ny|\n");
  const std::string out = (dir / "out").string();
  clean_corpus((dir / "f").string(), "en", "de", out, limits(1, 250));
  CHECK(read_file(out + ".en") == "a|N b|V\nc|N d|V\n");
  CHECK(read_file(out + ".de") == "x\ny|\n");
  // A bar on a later line only does not: it is removed.
  write_file(dir / "g.en", "a b\nc|N d\n");
  write_file(dir / "g.de", "x\ny\n");
  clean_corpus((dir / "g").string(), "en", "de", out, limits(1, 250));
  CHECK(read_file(out + ".en") == "a b\ncN d\n");
  // An empty factor in a factored corpus is an error naming file:line.
  const std::string blank = write_file(dir / "h.en", "a|N b|V\nc|N | d\n");
  write_file(dir / "h.de", "x\ny\n");
  CHECK_THROWS_WITH(clean_corpus((dir / "h").string(), "en", "de", out, limits(1, 250)),
                    Catch::Contains(blank + ":2") && Catch::Contains("blank factor"));
}

TEST_CASE("clean-corpus: errors name the files, counts and lines, and write nothing", "[clean_corpus]") {
  TempDir scratch;
  const auto& dir = scratch.dir;
  const std::string en = write_file(dir / "m.en", "one\ntwo\nthree\n");
  const std::string de = write_file(dir / "m.de", "eins\nzwei\n");
  const std::string out = (dir / "out").string();
  CHECK_THROWS_WITH(clean_corpus((dir / "m").string(), "en", "de", out, limits(1, 80)),
                    Catch::Contains(en + " has 3 lines") && Catch::Contains(de + " has 2 lines"));
  CHECK_THROWS_WITH(clean_corpus((dir / "m").string(), "de", "en", out, limits(1, 80)),
                    Catch::Contains(de + " has 2 lines") && Catch::Contains(en + " has 3 lines"));
  const std::string bad = write_file(dir / "b.de", "eins\nzw\xC3\x28i\ndrei\n");
  write_file(dir / "b.en", "one\ntwo\nthree\n");
  CHECK_THROWS_WITH(clean_corpus((dir / "b").string(), "en", "de", out, limits(1, 80)),
                    Catch::Contains(bad + ":2") && Catch::Contains("UTF-8"));
  CHECK_FALSE(std::filesystem::exists(out + ".en"));
  CHECK_THROWS_WITH(clean_corpus((dir / "b").string(), "en", "de", out, limits(5, 2)),
                    Catch::Contains("MIN 5 > MAX 2"));
  CHECK_THROWS_AS(clean_corpus((dir / "missing").string(), "en", "de", out, limits(1, 80)), attn::data::DataError);
}
