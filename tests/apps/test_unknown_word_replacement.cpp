// Tests of apps/generation/unknown_word_replacement (translate --replace-unk): each <unk> of a
// hypothesis becomes the source symbol of largest attention (pads and </s> never chosen), or
// that symbol's entry in an alignment dictionary; other symbols stay; an <unk> aligned to
// nothing stays; a dictionary line of fewer than two columns is refused, naming file and line.
#include <catch.hpp>

#include "apps/generation/unknown_word_replacement.hpp"
#include "core/error.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::app;
using attn::data::Dictionary;

namespace {

// A target dictionary of four words after the special symbols: ids 4 "die", 5 "Stadt", 6 "liegt", 7 "am".
Dictionary german() {
  Dictionary dictionary;
  for (const char* word : {"die", "Stadt", "liegt", "am"}) dictionary.add_symbol(word);
  return dictionary;
}

// Source "the town Zür@@ ich </s>" left-padded by one (columns: pad, the, town, Zür@@, ich,
// </s>); hypothesis "die <unk> <unk> <unk> </s>", its <unk>s attending most to Zür@@, ich and
// (but for </s> and the pad) town.
nn::Hypothesis zurich_hypothesis() {
  nn::Hypothesis h;
  h.tokens = {4, Dictionary::kUnk, Dictionary::kUnk, Dictionary::kUnk, Dictionary::kEos};
  h.attention = from_vector(std::vector<float>{0.0f, 0.7f, 0.1f, 0.1f, 0.05f, 0.05f,  // die
                                               0.0f, 0.1f, 0.1f, 0.6f, 0.1f,  0.1f,   // <unk> -> Zür@@
                                               0.0f, 0.1f, 0.1f, 0.1f, 0.6f,  0.1f,   // <unk> -> ich
                                               0.5f, 0.0f, 0.2f, 0.0f, 0.0f,  0.3f,   // <unk> -> town
                                               0.0f, 0.0f, 0.0f, 0.0f, 0.0f,  1.0f},  // </s>
                            {5, 6});
  return h;
}

const std::vector<int64_t> kSource = {10, 11, Dictionary::kUnk, 12, Dictionary::kEos};
const std::string kSourceSymbols = "the town Zür@@ ich";

}  // namespace

TEST_CASE("replace-unk copies the source symbol each <unk> attends to most, pads and </s> aside") {
  CHECK(UnknownWordReplacement().replace(zurich_hypothesis(), kSource, kSourceSymbols, german()) ==
        "die Zür@@ ich town");
}

TEST_CASE("replace-unk with an alignment dictionary puts the aligned symbol's entry in its place") {
  test::TempDir dir;
  // Columns beyond two ignored, a later line wins, a symbol without an entry copied.
  test::write_file(dir.file("entries.txt"), "town Stadt extra\nZür@@ Züri@@\nZür@@  Zür@@\n");
  CHECK(UnknownWordReplacement::read(dir.file("entries.txt"))
            .replace(zurich_hypothesis(), kSource, kSourceSymbols, german()) == "die Zür@@ ich Stadt");
}

TEST_CASE("replace-unk leaves an <unk> aligned to nothing and other symbols as they are") {
  nn::Hypothesis h;
  h.tokens = {5, Dictionary::kUnk, Dictionary::kEos};
  h.attention = from_vector(std::vector<float>(3, 1.0f), {3, 1});
  CHECK(UnknownWordReplacement().replace(h, {Dictionary::kEos}, "", german()) == "Stadt <unk>");  // source: </s>
  CHECK_THROWS_AS(UnknownWordReplacement().replace(h, {Dictionary::kEos}, "extra", german()), Error);
}

TEST_CASE("an alignment dictionary line without a replacement is refused, naming the file and line") {
  test::TempDir dir;
  test::write_file(dir.file("entries.txt"), "town Stadt\n\n");
  CHECK_THROWS_WITH(UnknownWordReplacement::read(dir.file("entries.txt")),
                    Catch::Contains("entries.txt:2: expected a source symbol and its replacement"));
  CHECK_THROWS_WITH(UnknownWordReplacement::read(dir.file("missing.txt")), Catch::Contains("missing.txt"));
}
