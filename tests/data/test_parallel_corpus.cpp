// Plain parallel corpus reading: line counts must match, UTF-8 errors name file:line.
#include <catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "data/parallel_corpus.hpp"
#include "data/text_io.hpp"

namespace {

std::filesystem::path scratch_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("attnlab_test_parallel_corpus_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::string write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

}  // namespace

TEST_CASE("parallel corpus reads aligned PREFIX.SRC / PREFIX.TGT", "[parallel_corpus]") {
  auto dir = scratch_dir();
  write(dir / "train.en", "Hello .\nGood morning !\n\n");
  write(dir / "train.de", "Hallo .\nGuten Morgen !\n\n");
  auto corpus = attn::data::read_parallel_corpus((dir / "train").string(), "en", "de");
  REQUIRE(corpus.size() == 3);
  CHECK(corpus.source[1] == "Good morning !");
  CHECK(corpus.target[1] == "Guten Morgen !");
  CHECK(corpus.target[2].empty());
  CHECK(corpus.source_path == (dir / "train.en").string());
  std::filesystem::remove_all(dir);
}

TEST_CASE("parallel corpus errors: line counts, UTF-8, missing file", "[parallel_corpus]") {
  auto dir = scratch_dir();
  std::string en = write(dir / "a.en", "one\ntwo\nthree\n");
  std::string de = write(dir / "a.de", "eins\nzwei\n");
  CHECK_THROWS_WITH(attn::data::read_parallel_files(en, de),
                    Catch::Contains(en + " has 3 lines") && Catch::Contains(de + " has 2 lines"));
  std::string bad = write(dir / "b.de", "eins\nzw\xC3\x28i\ndrei\n");
  CHECK_THROWS_WITH(attn::data::read_parallel_files(en, bad), Catch::Contains(bad + ":2") && Catch::Contains("UTF-8"));
  CHECK_THROWS_AS(attn::data::read_parallel_corpus((dir / "missing").string(), "en", "de"), attn::data::DataError);
  std::filesystem::remove_all(dir);
}
