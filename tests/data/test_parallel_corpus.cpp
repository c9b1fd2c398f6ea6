// Plain parallel corpus reading: line counts must match, UTF-8 errors name file:line.
#include <catch.hpp>

#include "data/parallel_corpus.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using attn::test::TempDir;
using attn::test::write_file;

TEST_CASE("parallel corpus reads aligned PREFIX.SRC / PREFIX.TGT", "[parallel_corpus]") {
  TempDir tmp;
  write_file(tmp.file("train.en"), "Hello .\nGood morning !\n\n");
  write_file(tmp.file("train.de"), "Hallo .\nGuten Morgen !\n\n");
  auto corpus = attn::data::read_parallel_corpus(tmp.file("train"), "en", "de");
  REQUIRE(corpus.size() == 3);
  CHECK(corpus.source[1] == "Good morning !");
  CHECK(corpus.target[1] == "Guten Morgen !");
  CHECK(corpus.target[2].empty());
  CHECK(corpus.source_path == tmp.file("train.en"));
}

TEST_CASE("parallel corpus errors: line counts, UTF-8, missing file", "[parallel_corpus]") {
  TempDir tmp;
  std::string en = write_file(tmp.file("a.en"), "one\ntwo\nthree\n");
  std::string de = write_file(tmp.file("a.de"), "eins\nzwei\n");
  CHECK_THROWS_WITH(attn::data::read_parallel_files(en, de),
                    Catch::Contains(en + " has 3 lines") && Catch::Contains(de + " has 2 lines"));
  std::string bad = write_file(tmp.file("b.de"), "eins\nzw\xC3\x28i\ndrei\n");
  CHECK_THROWS_WITH(attn::data::read_parallel_files(en, bad), Catch::Contains(bad + ":2") && Catch::Contains("UTF-8"));
  CHECK_THROWS_AS(attn::data::read_parallel_corpus(tmp.file("missing"), "en", "de"), attn::data::DataError);
}
