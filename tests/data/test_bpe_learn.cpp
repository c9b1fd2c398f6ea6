// BPE learning against subword-nmt's own output (docs/mt-tools.md §1.1, §1.5 (C)):
// vectors/own/bpe/, vectors/upstream/subword-nmt-tests/ and vectors/upstream/wmt17-en-de/bpe/.
#include <catch.hpp>

#include <filesystem>

#include "data/bpe_learn.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using namespace attn::data;
using attn::test::read_file;
using attn::test::vector_path;

namespace {

const std::string kOwn = vector_path("own/bpe/");
const std::string kUpstream = vector_path("upstream/");

WordCounts words_of_files(const std::vector<std::string>& paths) {
  WordCounts counts;
  for (const auto& path : paths) count_words(split_lines(read_utf8_file(path), LineMode::SplitLines), counts);
  return counts;
}

BpeLearnResult learn(const std::vector<std::string>& paths, int64_t symbols, int64_t min_frequency = 2) {
  return learn_bpe(words_of_files(paths), BpeLearnOptions{symbols, min_frequency});
}

// The -v trace as "rank\tleft\tright\tfrequency" lines, the format of the *.trace.tsv vectors.
std::string trace_tsv(const std::vector<BpeMerge>& merges) {
  std::string out = "rank\tleft\tright\tfrequency\n";
  for (size_t i = 0; i < merges.size(); ++i)
    out += std::to_string(i) + "\t" + merges[i].left + "\t" + merges[i].right + "\t" +
           std::to_string(merges[i].frequency) + "\n";
  return out;
}

}  // namespace

TEST_CASE("learn_bpe: 200 merges on the 401-line corpus, codes and trace") {
  BpeLearnResult result = learn({kOwn + "train.tok.en-de"}, 200);
  CHECK(format_bpe_codes(result.merges) == read_file(kOwn + "codes.200"));
  CHECK(trace_tsv(result.merges) == read_file(kOwn + "codes.200.trace.tsv"));
  CHECK_FALSE(result.stopped_by_min_frequency);
  CHECK(format_merge_trace(0, result.merges[0]) == "pair 0: e r -> er (frequency 403)\n");
}

TEST_CASE("learn_bpe: tie-breaking, overlaps and the min-frequency stop") {
  BpeLearnResult result = learn({kOwn + "ties.in"}, 50);
  CHECK(format_bpe_codes(result.merges) == read_file(kOwn + "ties.codes"));
  CHECK(trace_tsv(result.merges) == read_file(kOwn + "ties.codes.trace.tsv"));
  CHECK(result.stopped_by_min_frequency);
  CHECK(format_bpe_codes(learn({kOwn + "ties.in"}, 50, 1).merges) == read_file(kOwn + "ties.codes.minfreq1"));
}

TEST_CASE("learn_bpe: --min-frequency 5 stops after 866 merges") {
  BpeLearnResult result = learn({kOwn + "train.tok.en-de"}, 1000, 5);
  CHECK(result.merges.size() == 866);
  CHECK(result.stopped_by_min_frequency);
  CHECK(format_bpe_codes(result.merges) == read_file(kOwn + "codes.minfreq5"));
}

TEST_CASE("learn_bpe: subword-nmt's own test (1000 merges on corpus.en)") {
  CHECK(format_bpe_codes(learn({kUpstream + "subword-nmt-tests/corpus.en"}, 1000).merges) ==
        read_file(kUpstream + "subword-nmt-tests/bpe.ref"));
}

TEST_CASE("learn_bpe: several input files count as their concatenation") {
  CHECK(format_bpe_codes(learn({kOwn + "corpus.tok.de", kOwn + "corpus.tok.en"}, 200).merges) ==
        read_file(kOwn + "codes.200"));
}

TEST_CASE("learn_bpe: --dict-input gives the same codes as the text") {
  WordCounts text_counts = words_of_files({kOwn + "train.tok.en-de"});
  std::string dictionary;
  for (const auto& [word, count] : text_counts.items()) dictionary += word + " " + std::to_string(count) + "\n";
  WordCounts dict_counts;
  read_dictionary(split_lines(dictionary, LineMode::SplitLines), "dict", dict_counts);
  CHECK(format_bpe_codes(learn_bpe(dict_counts, {200, 2}).merges) == read_file(kOwn + "codes.200"));
}

TEST_CASE("learn_bpe: malformed --dict-input lines name file and line") {
  WordCounts counts;
  auto read = [&](const std::string& text) { read_dictionary(split_lines(text, LineMode::SplitLines), "d.txt", counts); };
  CHECK_THROWS_WITH(read("a 1\nb\n"), Catch::Contains("d.txt:2:"));
  CHECK_THROWS_WITH(read("a 1\nb 2 3\n"), Catch::Contains("d.txt:2:"));
  CHECK_THROWS_WITH(read("a x\n"), Catch::Contains("d.txt:1:"));
  CHECK_THROWS_WITH(read("high 3\nlow -5\n"), Catch::Contains("d.txt:2:") && Catch::Contains("negative count '-5'"));
}

TEST_CASE("learn_bpe: corner cases of the input") {
  WordCounts single_chars;
  single_chars.add("a", 5);
  CHECK(learn_bpe(single_chars, {10, 2}).merges.empty());
  CHECK_THROWS_AS(learn_bpe(single_chars, {10, 0}), DataError);
  // Only ' ' separates words; a tab is part of the word and merges through the regex replay
  // (expected output from upstream learn_bpe.py on "a\tb a\tb a\tb").
  WordCounts tabbed;
  tabbed.add("a\tb", 3);
  auto merges = learn_bpe(tabbed, {10, 2}).merges;
  REQUIRE(merges.size() == 2);
  CHECK(format_bpe_codes(merges) == "#version: 0.2\na \t\na\t b</w>\n");
}

TEST_CASE("learn_bpe: standard input ends lines at '\\n' only, a '\\r' inside a line is part of a word") {
  // Expected codes and frequencies from upstream learn_bpe.py -s 4 --min-frequency 1 -v reading
  // "xy\rxy yx\r\n\rxy\n" on standard input: "xy\rxy" is one word, the other '\r's are stripped.
  const TextLines lines = split_lines("xy\rxy yx\r\n\rxy\n", LineMode::Newline);
  CHECK(lines.lines.size() == 2);
  WordCounts counts;
  count_words(lines, counts);
  const BpeLearnResult result = learn_bpe(counts, {4, 1});
  CHECK(format_bpe_codes(result.merges) == "#version: 0.2\nx y</w>\ny x</w>\ny \r\ny\r xy</w>\n");
  REQUIRE(result.merges.size() == 4);
  CHECK(result.merges[0].frequency == 2);
}

TEST_CASE("learn_joint_bpe: codes equal learn_bpe on both files, vocabularies as upstream") {
  JointBpeResult joint = learn_joint_bpe({kOwn + "corpus.tok.en", kOwn + "corpus.tok.de"}, {200, 2});
  CHECK(format_bpe_codes(joint.codes.merges) == read_file(kOwn + "codes.200"));
  REQUIRE(joint.vocabularies.size() == 2);
  CHECK(joint.vocabularies[0] == read_file(kOwn + "joint.vocab.en"));
  CHECK(joint.vocabularies[1] == read_file(kOwn + "joint.vocab.de"));
}

TEST_CASE("learn_bpe: WMT17 newstest2017 (17 tokenized files), 3000 merges and trace") {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kUpstream + "wmt17-en-de/tok-a"))
    files.push_back(entry.path().string());
  REQUIRE(files.size() == 17);
  BpeLearnResult result = learn(files, 3000);
  CHECK(format_bpe_codes(result.merges) == read_file(kUpstream + "wmt17-en-de/bpe/codes.3000"));
  CHECK(trace_tsv(result.merges) == read_file(kUpstream + "wmt17-en-de/bpe/codes.3000.trace.tsv"));
}

TEST_CASE("read_utf8_file: invalid UTF-8 names file and line") {
  attn::test::TempDir tmp;
  std::string path = tmp.file("bad_utf8.txt");
  write_file_atomic(path, "good line\nbad \xff line\n");
  CHECK_THROWS_WITH(read_utf8_file(path), Catch::Contains(path + ":2:"));
}

TEST_CASE("check_utf8_text: the byte offset is within the line, the first byte of a text and of a line included") {
  CHECK_THROWS_WITH(check_utf8_text("\xff line\nsecond\nthird\n", "f"), Catch::Equals("f:1: invalid UTF-8 at byte 1"));
  CHECK_THROWS_WITH(check_utf8_text("ab\xff\nsecond\n", "f"), Catch::Equals("f:1: invalid UTF-8 at byte 3"));
  CHECK_THROWS_WITH(check_utf8_text("first\n\xffsecond\n", "f"), Catch::Equals("f:2: invalid UTF-8 at byte 1"));
  CHECK_THROWS_WITH(check_utf8_text("first\nsecond\nx\xc3", "f"), Catch::Equals("f:3: invalid UTF-8 at byte 2"));
}
