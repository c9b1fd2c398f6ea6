// Binarized corpus: round trip in both dtypes, fairseq-style encoding and report, and clear
// errors (never a crash) for truncated, foreign or corrupt files.
#include <catch.hpp>

#include <cstring>
#include <filesystem>

#include "core/checksum.hpp"
#include "data/binarized_corpus.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using attn::data::BinarizedCorpus;
using attn::data::DataError;
using attn::data::TokenDtype;
using attn::test::TempDir;

namespace {

const std::vector<std::vector<int32_t>> kSentences{{5, 6, 2}, {2}, {3, 2}, {9, 4, 7, 8, 2}};

// A dictionary of `size` symbols: the specials and madeupwords.
attn::data::Dictionary dictionary_of_size(size_t size) {
  attn::data::Dictionary dictionary;
  dictionary.pad_to_multiple(int64_t(size));
  return dictionary;
}

}  // namespace

TEST_CASE("binarized corpus round trip (uint16 and int32)", "[binarized]") {
  TempDir tmp;
  for (size_t dictionary_size : {size_t{10}, size_t{70000}}) {
    std::string path = tmp.file("round.bin");
    attn::data::write_binarized_corpus(path, kSentences, dictionary_of_size(dictionary_size));
    BinarizedCorpus corpus = BinarizedCorpus::open(path);
    CHECK(corpus.dtype() == (dictionary_size == 10 ? TokenDtype::kUInt16 : TokenDtype::kInt32));
    REQUIRE(corpus.size() == 4);
    CHECK(corpus.num_tokens() == 11);
    CHECK(corpus.dictionary_size() == dictionary_size);
    for (size_t i = 0; i < kSentences.size(); ++i) {
      CHECK(corpus.length(i) == kSentences[i].size());
      CHECK(corpus.sentence(i) == std::vector<int64_t>(kSentences[i].begin(), kSentences[i].end()));
    }
    CHECK(corpus.sentences().size() == kSentences.size());
    CHECK(corpus.sentences().back() == corpus.sentence(kSentences.size() - 1));
    CHECK_THROWS_AS(corpus.length(4), DataError);
    // header 56 + offsets 5*8 + tokens 11*(2 or 4)
    CHECK(std::filesystem::file_size(path) == 56 + 40 + 11 * (dictionary_size == 10 ? 2 : 4));
    BinarizedCorpus moved = std::move(corpus);
    CHECK(moved.sentence(3)[0] == 9);
  }
  CHECK_THROWS_WITH(attn::data::write_binarized_corpus(tmp.file("bad.bin"), {{3, 12}}, dictionary_of_size(10)),
                    Catch::Contains("id 12"));
}

TEST_CASE("binarize_text_file encodes like fairseq and reports unknowns", "[binarized]") {
  TempDir tmp;
  std::string text = tmp.file("valid.en");
  attn::test::write_file(text, "the cat\nthe dog barks\n\n");
  auto dictionary = attn::data::Dictionary::parse("the 5\ncat 3\n", "inline");
  std::string out = tmp.file("valid.bin");
  auto stats = attn::data::binarize_text_file(text, dictionary, out, 2);
  CHECK(stats.sentences == 3);
  CHECK(stats.tokens == 8);  // 2+1, 3+1, 0+1
  CHECK(stats.unknown_tokens == 2);
  CHECK(attn::data::binarize_report("en", "valid", stats) == "[en] valid: 3 sents, 8 tokens, 25.0% replaced by <unk>");
  BinarizedCorpus corpus = BinarizedCorpus::open(out);
  CHECK(corpus.sentence(1) == std::vector<int64_t>{4, 3, 3, 2});
  CHECK(corpus.sentence(2) == std::vector<int64_t>{2});
  CHECK(corpus.dictionary_size() == 6);
}

TEST_CASE("a raw text corpus (fairseq's --dataset-impl raw) holds the ids binarizing gives, and its lines",
          "[binarized]") {
  TempDir tmp;
  const std::string text = tmp.file("valid.en-de.en");
  attn::test::write_file(text, "the cat\nthe  dog barks\n\n");
  const auto dictionary = attn::data::Dictionary::parse("the 5\ncat 3\n", "inline");
  attn::data::binarize_text_file(text, dictionary, tmp.file("valid.bin"));
  const BinarizedCorpus binarized = BinarizedCorpus::open(tmp.file("valid.bin"));
  BinarizedCorpus raw = BinarizedCorpus::from_text(text, dictionary);
  CHECK(raw.format() == attn::data::BinarizedFormat::kRawText);
  CHECK(raw.sentences() == binarized.sentences());
  CHECK(raw.dictionary_size() == dictionary.size());
  const BinarizedCorpus moved = std::move(raw);  // the ids live in the corpus and move with it
  CHECK(moved.sentence(1) == std::vector<int64_t>{4, 3, 3, 2});
  CHECK(moved.original_text(1) == std::optional<std::string_view>("the  dog barks"));
  CHECK(moved.original_text(2) == std::optional<std::string_view>(""));
  CHECK_FALSE(binarized.original_text(1));  // a binarized file keeps only the ids
  CHECK_THROWS_AS(moved.original_text(3), DataError);
  CHECK(attn::data::raw_text_path("d", "valid", "en", "de", "en") == "d/valid.en-de.en");
  attn::test::write_file(text, "the cat\nthe \xff dog\n");
  CHECK_THROWS_WITH(BinarizedCorpus::from_text(text, dictionary), Catch::Contains("valid.en-de.en:2"));
}

TEST_CASE("report percentages are formatted as Python's {:.3}", "[binarized]") {
  auto report = [](size_t tokens, int64_t unknown) {
    return attn::data::binarize_report("de", "test", {1, tokens, unknown});
  };
  CHECK(report(200, 1) == "[de] test: 1 sents, 200 tokens, 0.5% replaced by <unk>");
  CHECK(report(200, 0) == "[de] test: 1 sents, 200 tokens, 0.0% replaced by <unk>");
  CHECK(report(8, 8) == "[de] test: 1 sents, 8 tokens, 1e+02% replaced by <unk>");
  CHECK(report(1000000, 1) == "[de] test: 1 sents, 1000000 tokens, 0.0001% replaced by <unk>");
  CHECK(report(10000000, 1) == "[de] test: 1 sents, 10000000 tokens, 1e-05% replaced by <unk>");
  CHECK(report(3, 1) == "[de] test: 1 sents, 3 tokens, 33.3% replaced by <unk>");
  CHECK(report(10, 1) == "[de] test: 1 sents, 10 tokens, 10.0% replaced by <unk>");
}

TEST_CASE("truncated, foreign and corrupt binarized files give clear errors", "[binarized]") {
  TempDir tmp;
  std::string good = tmp.file("good.bin");
  attn::data::write_binarized_corpus(good, kSentences, dictionary_of_size(10));
  std::string bytes = attn::test::read_file(good);
  std::string path = tmp.file("broken.bin");
  auto open_with = [&](const std::string& content) {
    attn::test::write_file(path, content);
    return BinarizedCorpus::open(path);
  };

  CHECK_THROWS_WITH(open_with(""), Catch::Contains(path) && Catch::Contains("not an attnlab binarized corpus"));
  CHECK_THROWS_WITH(open_with(bytes.substr(0, 20)), Catch::Contains("not an attnlab binarized corpus"));
  for (size_t cut : {size_t{49}, bytes.size() / 2, bytes.size() - 1})
    CHECK_THROWS_WITH(open_with(bytes.substr(0, cut)), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(open_with(bytes + "x"), Catch::Contains("truncated"));
  // A fairseq .idx file and a text file are foreign.
  CHECK_THROWS_WITH(open_with(std::string("MMIDIDX\0\0", 9) + std::string(64, '\0')), Catch::Contains("bad magic"));
  CHECK_THROWS_WITH(open_with(std::string(100, 'a')), Catch::Contains("bad magic"));

  auto patched = [&](size_t offset, const void* value, size_t size) {
    std::string copy = bytes;
    copy.replace(offset, size, static_cast<const char*>(value), size);
    return copy;
  };
  uint32_t version = 7, dtype = 9;
  uint64_t huge = ~uint64_t{0} / 2, tokens = 8, small_vocab = 5, bad_offset = 1;
  CHECK_THROWS_WITH(open_with(patched(8, &version, 4)), Catch::Contains("version 7"));
  CHECK_THROWS_WITH(open_with(patched(12, &dtype, 4)), Catch::Contains("dtype code 9"));
  CHECK_THROWS_WITH(open_with(patched(16, &huge, 8)), Catch::Contains("truncated"));  // no overflow, no crash
  CHECK_THROWS_WITH(open_with(patched(24, &tokens, 8)), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(open_with(patched(32, &small_vocab, 8)), Catch::Contains("outside the dictionary"));
  const size_t offsets = attn::data::kBinarizedHeaderBytes;
  CHECK_THROWS_WITH(open_with(patched(offsets, &bad_offset, 8)), Catch::Contains("corrupt offsets"));
  CHECK_THROWS_WITH(open_with(patched(offsets + 8, &huge, 8)), Catch::Contains("corrupt offsets"));
  // Sentence 2 made empty: offsets[3] = offsets[2].
  uint64_t offset_two = 0;
  std::memcpy(&offset_two, bytes.data() + offsets + 2 * 8, 8);
  CHECK_THROWS_WITH(open_with(patched(offsets + 3 * 8, &offset_two, 8)),
                    Catch::Contains(path) && Catch::Contains("sentence 2 is empty"));
  // Format version 1 (before the checksum) asks for a new preprocess.
  uint32_t old_version = 1;
  CHECK_THROWS_WITH(open_with(patched(8, &old_version, 4)), Catch::Contains(path) && Catch::Contains("preprocess"));
  CHECK_THROWS_WITH(BinarizedCorpus::open(tmp.file("missing.bin")), Catch::Contains("cannot open"));
}

TEST_CASE("every flipped bit of the data is caught by a structural check or the checksum", "[binarized]") {
  TempDir tmp;
  const std::string good = tmp.file("good.bin"), path = tmp.file("flipped.bin");
  attn::data::write_binarized_corpus(good, kSentences, dictionary_of_size(10));
  const std::string bytes = attn::test::read_file(good);
  for (size_t byte = attn::data::kBinarizedChecksummedFrom; byte < bytes.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = bytes;
      flipped[byte] = char(flipped[byte] ^ (1 << bit));
      attn::test::write_file(path, flipped);
      INFO("byte " << byte << " bit " << bit);
      CHECK_THROWS_WITH(BinarizedCorpus::open(path), Catch::Contains(path));
    }
  // A token changed to another valid id passes every structural check: only the checksum sees it.
  std::string other_token = bytes;
  other_token[bytes.size() - 2] = 3;  // the last </s> (2) becomes 3
  attn::test::write_file(path, other_token);
  CHECK_THROWS_WITH(BinarizedCorpus::open(path), Catch::Contains(path) && Catch::Contains("checksum mismatch"));
}

TEST_CASE("a binarized file records its dictionary's fingerprint; version 2 files have none and still open",
          "[binarized]") {
  TempDir tmp;
  const std::string path = tmp.file("fingerprinted.bin");
  const auto dictionary = attn::data::Dictionary::parse("the 5\ncat 3\ndog 2\n", "inline");
  attn::data::write_binarized_corpus(path, {{4, 5, 2}, {6, 2}}, dictionary);
  CHECK(BinarizedCorpus::open(path).dictionary_fingerprint() == dictionary.fingerprint());
  // The same symbols in another order, or one symbol renamed, mean other words for the ids.
  CHECK(attn::data::Dictionary::parse("cat 5\nthe 3\ndog 2\n", "inline").fingerprint() != dictionary.fingerprint());
  CHECK(attn::data::Dictionary::parse("the 5\ncat 3\ndig 2\n", "inline").fingerprint() != dictionary.fingerprint());
  // Counts do not change what an id means.
  CHECK(attn::data::Dictionary::parse("the 9\ncat 1\ndog 1\n", "inline").fingerprint() == dictionary.fingerprint());

  // Version 2: the same file without the 8 fingerprint bytes, its checksum over what follows.
  const std::string v3 = attn::test::read_file(path);
  std::string v2 = v3.substr(0, attn::data::kBinarizedChecksummedFrom) + v3.substr(attn::data::kBinarizedHeaderBytes);
  const uint32_t version = 2;
  std::memcpy(v2.data() + 8, &version, 4);
  const uint64_t checksum =
      attn::fnv1a64(v2.data() + attn::data::kBinarizedChecksummedFrom, v2.size() - attn::data::kBinarizedChecksummedFrom);
  std::memcpy(v2.data() + 40, &checksum, 8);
  attn::test::write_file(path, v2);
  const BinarizedCorpus old = BinarizedCorpus::open(path);
  CHECK_FALSE(old.dictionary_fingerprint().has_value());
  CHECK(old.sentences() == std::vector<std::vector<int64_t>>{{4, 5, 2}, {6, 2}});
}

TEST_CASE("binarized_path follows fairseq's naming", "[binarized]") {
  CHECK(attn::data::binarized_path("bin", "valid1", "en", "de", "de") == "bin/valid1.en-de.de.bin");
}
