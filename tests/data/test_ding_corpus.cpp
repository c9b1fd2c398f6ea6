// Ding EN-DE teaching corpus: sentence extraction, cleaning, dedup, seeded split, output files.
#include <catch.hpp>

#include <filesystem>
#include <set>

#include "data/ding_corpus.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using attn::data::SentencePair;
using attn::test::TempDir;

namespace {

// A miniature Ding file: comments, word entries, aligned sentence sub-entries with
// annotations and alternatives, a misaligned line, a duplicate.
const char* kSyntheticDing =
    "# Version :: devel\n"
    "# License :: GPL\n"
    "Haus {n} | Häuser {pl} | Das Haus ist groß. :: house | houses | The house is big.\n"
    "gehen {vi} | Wir gehen nach Hause [ugs.]. | Geh! :: to go | We are going home [coll.]. | Go!\n"
    "Zeit {f} | Kommt Zeit, kommt Rat. [Sprw.]; Abwarten und Tee trinken. :: time | Time will tell. [prov.]; All in good time.\n"
    "Satz {m} | Das ist ein Satz. | Noch ein Satz. :: sentence | This is a sentence.\n"
    "Haus {n} | Das Haus ist groß. :: house | The house is big.\n"
    "Frage {f} | Wie {adv} spät ist es? :: question | What time is it ?\n"
    "Liste {f} | Eine Liste {f} [adm.] von Dingen. :: list | A list of things.\n";

}  // namespace

TEST_CASE("Ding text cleaning and sentence test", "[ding]") {
  using attn::data::clean_ding_text;
  CHECK(clean_ding_text("Wir gehen nach Hause [ugs.].") == "Wir gehen nach Hause.");
  CHECK(clean_ding_text("Eine Liste {f} [adm.]  von Dingen.") == "Eine Liste von Dingen.");
  CHECK(clean_ding_text(" Kommt Zeit, kommt Rat. [Sprw.]; Abwarten.") == "Kommt Zeit, kommt Rat.");
  CHECK(clean_ding_text("unclosed [bracket stays") == "unclosed [bracket stays");
  CHECK(attn::data::is_ding_sentence("We go home."));
  CHECK(attn::data::is_ding_sentence("Is it late?"));
  CHECK_FALSE(attn::data::is_ding_sentence("Go home!"));  // two words
  CHECK_FALSE(attn::data::is_ding_sentence("we go home"));
  CHECK_FALSE(attn::data::is_ding_sentence(""));
}

TEST_CASE("Ding sentence pairs from a synthetic dictionary", "[ding]") {
  TempDir tmp;
  std::string path = attn::test::write_file(tmp.dir / "de-en", kSyntheticDing);
  std::vector<SentencePair> pairs = attn::data::read_ding_sentence_pairs(path);
  std::vector<SentencePair> expected{
      {"The house is big.", "Das Haus ist groß."},
      {"We are going home.", "Wir gehen nach Hause."},
      {"Time will tell.", "Kommt Zeit, kommt Rat."},
      {"What time is it ?", "Wie spät ist es?"},
      {"A list of things.", "Eine Liste von Dingen."},
  };
  CHECK(pairs == expected);
}

TEST_CASE("Ding word and phrase entries: the aligned sub-entries that are not sentence pairs", "[ding]") {
  using attn::data::ding_entry_pairs;
  CHECK(ding_entry_pairs("Haus {n} | Häuser {pl} | Das Haus ist groß. :: house | houses | The house is big.") ==
        std::vector<SentencePair>{{"house", "Haus"}, {"houses", "Häuser"}});
  CHECK(ding_entry_pairs("gehen {vi} | Geh! :: to go [coll.] | Go!") ==
        std::vector<SentencePair>{{"to go", "gehen"}, {"Go!", "Geh!"}});
  CHECK(ding_entry_pairs("# Haus :: house").empty());
  CHECK(ding_entry_pairs("Satz {m} | Sätze :: sentence").empty());  // misaligned
  CHECK(ding_entry_pairs("{n} :: house").empty());                  // a side empty after cleaning
}

TEST_CASE("Ding corpus: sentences and distinct entries in one pass; entries join train only", "[ding]") {
  TempDir tmp;
  std::string path = attn::test::write_file(tmp.dir / "de-en", kSyntheticDing);
  const attn::data::DingCorpus corpus = attn::data::read_ding_corpus(path);
  CHECK(corpus.sentences == attn::data::read_ding_sentence_pairs(path));
  std::vector<SentencePair> expected{{"house", "Haus"},     {"houses", "Häuser"},   {"to go", "gehen"},
                                     {"Go!", "Geh!"},       {"time", "Zeit"},       {"question", "Frage"},
                                     {"list", "Liste"}};
  CHECK(corpus.entries == expected);  // the repeated Haus line adds nothing

  std::vector<SentencePair> sentences;
  for (int i = 0; i < 20; ++i) sentences.push_back({"english " + std::to_string(i), "deutsch " + std::to_string(i)});
  const auto split_with = [&](size_t count, uint64_t seed) {
    auto split = attn::data::split_corpus(sentences, 1, 3, 3);
    attn::data::add_entries_to_train(split, corpus.entries, count, seed);
    return split;
  };
  const auto plain = attn::data::split_corpus(sentences, 1, 3, 3);
  const auto with_three = split_with(3, 5);
  CHECK(with_three.valid == plain.valid);
  CHECK(with_three.test == plain.test);
  REQUIRE(with_three.train.size() == plain.train.size() + 3);
  CHECK(std::equal(plain.train.begin(), plain.train.end(), with_three.train.begin()));
  CHECK(split_with(3, 5).train == with_three.train);
  CHECK(split_with(100, 5).train.size() == plain.train.size() + expected.size());
  std::set<std::string> chosen;
  for (int seed = 0; seed < 8; ++seed) chosen.insert(split_with(1, uint64_t(seed)).train.back().english);
  CHECK(chosen.size() > 1);  // the subset depends on the seed
}

TEST_CASE("Ding missing file names the Debian package", "[ding]") {
  CHECK_THROWS_WITH(attn::data::read_ding_sentence_pairs("/nonexistent/de-en"),
                    Catch::Contains("/nonexistent/de-en") && Catch::Contains("trans-de-en"));
}

TEST_CASE("a file that is not a Ding dictionary is an error naming its first foreign line", "[ding]") {
  TempDir tmp;
  const std::string path =
      attn::test::write_file(tmp.dir / "notes.txt", "# a comment\n\nHaus {n} :: house\r\njust some prose\n");
  CHECK_THROWS_WITH(attn::data::read_ding_corpus(path),
                    Catch::Contains("notes.txt:4") && Catch::Contains("German :: English") &&
                        Catch::Contains("just some prose"));
}

TEST_CASE("corpus split is seeded, disjoint and complete; files are written", "[ding]") {
  std::vector<SentencePair> pairs;
  for (int i = 0; i < 50; ++i) pairs.push_back({"english " + std::to_string(i), "deutsch " + std::to_string(i)});
  auto split = attn::data::split_corpus(pairs, 7, 5, 4);
  REQUIRE(split.valid.size() == 5);
  REQUIRE(split.test.size() == 4);
  REQUIRE(split.train.size() == 41);
  std::set<std::string> seen;
  for (const auto* part : {&split.train, &split.valid, &split.test})
    for (const auto& pair : *part) seen.insert(pair.english);
  CHECK(seen.size() == 50);
  CHECK(attn::data::split_corpus(pairs, 7, 5, 4).valid == split.valid);
  CHECK(attn::data::split_corpus(pairs, 8, 5, 4).valid != split.valid);
  CHECK_THROWS_AS(attn::data::split_corpus(pairs, 7, 25, 25), attn::data::DataError);
  // Sizes whose sum wraps around size_t are refused, not cut into a vector of 2^64 pairs.
  CHECK_THROWS_AS(attn::data::split_corpus(pairs, 7, SIZE_MAX, 2), attn::data::DataError);

  TempDir tmp;
  auto dir = tmp.dir / "out";
  attn::data::write_corpus_split(split, dir.string());
  auto valid_de = attn::data::read_lines((dir / "valid.de").string());
  REQUIRE(valid_de.size() == 5);
  CHECK(valid_de[0] == split.valid[0].german);
  CHECK(attn::data::read_lines((dir / "train.en").string()).size() == 41);
  CHECK(attn::data::read_lines((dir / "test.en").string()).size() == 4);
}

TEST_CASE("the installed Ding dictionary gives about 19k sentence pairs", "[ding][installed]") {
  if (!std::filesystem::exists(attn::data::kDingDefaultPath)) {
    WARN("trans-de-en is not installed; skipping the real-corpus check");
    return;
  }
  auto pairs = attn::data::read_ding_sentence_pairs(attn::data::kDingDefaultPath);
  CHECK(pairs.size() > 15000);
  CHECK(pairs.size() < 25000);
  std::set<std::pair<std::string, std::string>> distinct;
  for (const auto& pair : pairs) {
    distinct.emplace(pair.english, pair.german);
    REQUIRE(attn::data::is_ding_sentence(pair.english));
    REQUIRE(attn::data::is_ding_sentence(pair.german));
    REQUIRE(pair.english.find_first_of("{}[]") == std::string::npos);
  }
  CHECK(distinct.size() == pairs.size());
  auto split = attn::data::split_corpus(pairs, 1);
  CHECK(split.valid.size() == 1000);
  CHECK(split.test.size() == 1000);
}

TEST_CASE("the installed Ding dictionary holds hundreds of thousands of entries, none a sentence pair",
          "[ding][installed]") {
  if (!std::filesystem::exists(attn::data::kDingDefaultPath)) {
    WARN("trans-de-en is not installed; skipping the real-corpus check");
    return;
  }
  const attn::data::DingCorpus corpus = attn::data::read_ding_corpus(attn::data::kDingDefaultPath);
  CHECK(corpus.entries.size() > 300000);
  CHECK(corpus.sentences.size() > 15000);
  std::set<std::pair<std::string, std::string>> sentences;
  for (const auto& pair : corpus.sentences) sentences.emplace(pair.english, pair.german);
  for (const auto& entry : corpus.entries) {
    REQUIRE_FALSE(entry.english.empty());
    REQUIRE_FALSE(entry.german.empty());
    REQUIRE(sentences.count({entry.english, entry.german}) == 0);
  }
}
