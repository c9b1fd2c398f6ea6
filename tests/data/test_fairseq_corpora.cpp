// fairseq-preprocess's own binarized splits, in its default `--dataset-impl mmap`
// (data/fairseq_mmap_index.hpp) and its older `lazy`/`cached` (data/fairseq_lazy_index.hpp): the
// ids read must be those fairseq's readers return, in every integer type fairseq writes, a
// damaged index must give an error naming it, and the files attnlab writes in these formats must
// read back.
#include <catch.hpp>

#include <cstring>
#include <filesystem>
#include <sstream>

#include "data/binarized_corpus.hpp"
#include "data/dictionary.hpp"
#include "data/fairseq_lazy_index.hpp"
#include "data/fairseq_mmap_index.hpp"
#include "test_support.hpp"

using attn::data::BinarizedCorpus;
using attn::data::BinarizedFormat;
using attn::data::TokenDtype;
using attn::test::TempDir;
using attn::test::vector_path;

namespace {

using Sentences = std::vector<std::vector<int64_t>>;

// own/fairseq/data-bin-ids/SPLIT.LANG.ids: what fairseq's reader returns for each sentence of
// own/fairseq/data-bin (fairseq-preprocess 3d262bb, --workers 2, of data-bin-text/), one line each.
Sentences fairseq_ids(const std::string& split, const std::string& lang) {
  std::istringstream lines(
      attn::test::read_file(vector_path("own/fairseq/data-bin-ids/" + split + "." + lang + ".ids")));
  Sentences sentences;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream ids(line);
    sentences.emplace_back();
    for (int64_t id; ids >> id;) sentences.back().push_back(id);
  }
  return sentences;
}

std::string fairseq_split(const std::string& split, const std::string& lang) {
  return vector_path("own/fairseq/data-bin/" + split + ".en-de." + lang + ".bin");
}

// The valid English split of a data-bin copied to a temporary folder, to open it with its index
// or data replaced (damaged).
struct DamagedSplit {
  TempDir tmp;
  const std::string good_index, good_data;
  const std::string bin = tmp.file("valid.en-de.en.bin"), idx = tmp.file("valid.en-de.en.idx");

  explicit DamagedSplit(const std::string& data_bin)
      : good_index(attn::test::read_file(data_bin + "valid.en-de.en.idx")),
        good_data(attn::test::read_file(data_bin + "valid.en-de.en.bin")) {}
  BinarizedCorpus open_with(const std::string& index, const std::string& data) const {
    attn::test::write_file(idx, index);
    attn::test::write_file(bin, data);
    return BinarizedCorpus::open(bin);
  }
  // A .bin one id shorter or longer than the index says is refused, naming it.
  void check_data_size_refused(size_t id_bytes) const {
    CHECK_THROWS_WITH(open_with(good_index, good_data.substr(0, good_data.size() - id_bytes)),
                      Catch::Contains(bin) && Catch::Contains("size mismatch"));
    CHECK_THROWS_WITH(open_with(good_index, good_data + std::string(id_bytes, 'x')), Catch::Contains("size mismatch"));
  }
  // The good index with `value`'s bytes at `offset`.
  template <typename T>
  std::string patched(size_t offset, const T& value) const {
    std::string copy = good_index;
    copy.replace(offset, sizeof value, reinterpret_cast<const char*>(&value), sizeof value);
    return copy;
  }
};

}  // namespace

TEST_CASE("fairseq-preprocess's splits read as fairseq reads them, and as attnlab's preprocess encodes the text",
          "[binarized][fairseq]") {
  TempDir tmp;
  for (const std::string split : {"train", "valid"})
    for (const std::string lang : {"en", "de"}) {
      INFO(split << "." << lang);
      const BinarizedCorpus corpus = BinarizedCorpus::open(fairseq_split(split, lang));
      CHECK(corpus.format() == BinarizedFormat::kFairseqMmap);
      CHECK(corpus.dtype() == TokenDtype::kUInt16);  // fairseq's type for dictionaries under 65,500
      CHECK_FALSE(corpus.dictionary_size().has_value());
      CHECK_FALSE(corpus.dictionary_fingerprint().has_value());
      const Sentences expected = fairseq_ids(split, lang);
      REQUIRE(corpus.size() == (split == "train" ? 150 : 20));
      CHECK(corpus.sentences() == expected);
      size_t tokens = 0, largest = 0;
      for (const auto& sentence : expected) {
        tokens += sentence.size();
        for (int64_t id : sentence) largest = std::max(largest, size_t(id));
      }
      CHECK(corpus.num_tokens() == tokens);
      CHECK(corpus.max_id() == int64_t(largest));

      // attnlab's own preprocess of the same text with fairseq's dictionary: the same ids.
      const auto dictionary = attn::data::Dictionary::load(vector_path("own/fairseq/data-bin/dict." + lang + ".txt"));
      const std::string own = tmp.file(split + "." + lang + ".bin");
      attn::data::binarize_text_file(vector_path("own/fairseq/data-bin-text/" + split + "." + lang), dictionary, own);
      const BinarizedCorpus attnlab = BinarizedCorpus::open(own);
      CHECK(attnlab.format() == BinarizedFormat::kAttnlab);
      CHECK(attnlab.sentences() == expected);
    }
}

TEST_CASE("fairseq's other id types (int32 of older versions, uint32, int64) read the same ids",
          "[binarized][fairseq]") {
  const Sentences expected = fairseq_ids("valid", "en");
  for (const auto& [name, dtype] : {std::pair{"int32", TokenDtype::kInt32}, std::pair{"uint32", TokenDtype::kUInt32},
                                    std::pair{"int64", TokenDtype::kInt64}}) {
    INFO(name);
    const BinarizedCorpus corpus =
        BinarizedCorpus::open(vector_path(std::string("own/fairseq/dtypes/valid.en-de.en.") + name + ".bin"));
    CHECK(corpus.dtype() == dtype);
    CHECK(corpus.sentences() == expected);
  }
}

TEST_CASE("a damaged fairseq index or data file gives an error naming it", "[binarized][fairseq]") {
  const DamagedSplit split(vector_path("own/fairseq/data-bin/"));
  const uint64_t count = 20;  // sentences
  REQUIRE(split.open_with(split.good_index, split.good_data).sentences() == fairseq_ids("valid", "en"));

  // No .idx, or one without fairseq's magic: the .bin is not attnlab's either, and both are said.
  std::filesystem::remove(split.idx);
  CHECK_THROWS_WITH(BinarizedCorpus::open(split.bin),
                    Catch::Contains(split.bin) && Catch::Contains("not an attnlab") && Catch::Contains(split.idx));
  CHECK_THROWS_WITH(split.open_with("MMIDIDY" + split.good_index.substr(7), split.good_data),
                    Catch::Contains("nor one of fairseq's formats"));

  CHECK_THROWS_WITH(split.open_with(split.good_index.substr(0, 20), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("truncated fairseq index"));
  CHECK_THROWS_WITH(split.open_with(split.patched(9, uint64_t{2}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("version 2"));
  CHECK_THROWS_WITH(split.open_with(split.patched(17, uint8_t{6}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("float64"));
  CHECK_THROWS_WITH(split.open_with(split.patched(17, uint8_t{77}), split.good_data), Catch::Contains("dtype code 77"));
  // A sentence count the file cannot hold (the huge one must not overflow), a cut or a longer file.
  for (const uint64_t wrong_count : {count + 1, ~uint64_t{0} / 4})
    CHECK_THROWS_WITH(split.open_with(split.patched(18, wrong_count), split.good_data),
                      Catch::Contains(split.idx) && Catch::Contains("corrupt or truncated fairseq index"));
  CHECK_THROWS_WITH(split.open_with(split.good_index.substr(0, split.good_index.size() - 1), split.good_data),
                    Catch::Contains("truncated"));
  CHECK_THROWS_WITH(split.open_with(split.good_index + "x", split.good_data), Catch::Contains("truncated"));
  // Lengths (int32 from byte 26) and byte offsets (int64 after them).
  const size_t lengths = attn::data::kFairseqMmapHeaderBytes, pointers = lengths + 4 * count;
  CHECK_THROWS_WITH(split.open_with(split.patched(lengths + 4 * 3, int32_t{0}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("sentence 3 has length 0"));
  CHECK_THROWS_WITH(split.open_with(split.patched(lengths, int32_t{-5}), split.good_data),
                    Catch::Contains("length -5"));
  CHECK_THROWS_WITH(split.open_with(split.patched(pointers + 8 * 2, int64_t{3}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("sentence 2 starts at byte 3"));
  CHECK_THROWS_WITH(split.open_with(split.patched(pointers, int64_t{-2}), split.good_data),
                    Catch::Contains("corrupt index"));
  split.check_data_size_refused(2);  // uint16 ids
  // Ids no dictionary has: 65,535 as uint16 is valid for the file but every caller's
  // dictionary check sees it (max_id); as int16 it reads negative and is refused here.
  std::string big_id = split.good_data;
  big_id[0] = big_id[1] = char(0xff);
  CHECK(split.open_with(split.good_index, big_id).max_id() == 65535);
  CHECK_THROWS_WITH(split.open_with(split.patched(17, uint8_t{3}), big_id),
                    Catch::Contains(split.bin) && Catch::Contains("id -1, not a valid token id"));
  // attnlab's own magic wins over a fairseq .idx left beside the file.
  attn::data::Dictionary dictionary;
  attn::data::write_binarized_corpus(split.bin, {{3, 2}}, dictionary);
  CHECK(BinarizedCorpus::open(split.bin).format() == BinarizedFormat::kAttnlab);
}

TEST_CASE("fairseq_index_path puts .idx in place of .bin", "[binarized][fairseq]") {
  CHECK(attn::data::fairseq_index_path("bin/train.en-de.en.bin") == "bin/train.en-de.en.idx");
  CHECK(attn::data::fairseq_index_path("bin/train.en-de.en") == "bin/train.en-de.en.idx");
}

TEST_CASE("fairseq_mmap_files writes the type fairseq picks for the dictionary's size, and reads back",
          "[binarized][fairseq]") {
  CHECK(attn::data::fairseq_token_dtype_for(65499) == TokenDtype::kUInt16);
  CHECK(attn::data::fairseq_token_dtype_for(65500) == TokenDtype::kUInt32);
  CHECK(attn::data::fairseq_token_dtype_for(4294967294) == TokenDtype::kUInt32);
  CHECK(attn::data::fairseq_token_dtype_for(4294967295) == TokenDtype::kInt64);
  TempDir tmp;
  const std::vector<std::vector<int32_t>> sentences{{70000, 6, 2}, {2}, {65535, 2}};
  const std::string bin = tmp.file("big.bin");
  const attn::data::FairseqFiles files = attn::data::fairseq_mmap_files(sentences, 70001);
  attn::test::write_file(bin, files.data);
  attn::test::write_file(tmp.file("big.idx"), files.index);
  const BinarizedCorpus corpus = BinarizedCorpus::open(bin);
  CHECK(corpus.dtype() == TokenDtype::kUInt32);
  CHECK(corpus.sentences() == Sentences{{70000, 6, 2}, {2}, {65535, 2}});
  CHECK(files.data.size() == 6 * 4);
  CHECK(files.index.size() == attn::data::kFairseqMmapHeaderBytes + 3 * 12);
}

// own/fairseq/data-bin-lazy: fairseq-preprocess --dataset-impl lazy --workers 2 of the same text
// (cached writes the same bytes); fairseq's IndexedDataset and IndexedCachedDataset, through its
// translation task's loader, return the ids of data-bin-ids for it.
TEST_CASE("fairseq's lazy/cached splits read as fairseq reads them", "[binarized][fairseq]") {
  for (const std::string split : {"train", "valid"})
    for (const std::string lang : {"en", "de"}) {
      INFO(split << "." << lang);
      const BinarizedCorpus corpus =
          BinarizedCorpus::open(vector_path("own/fairseq/data-bin-lazy/" + split + ".en-de." + lang + ".bin"));
      CHECK(corpus.format() == BinarizedFormat::kFairseqLazy);
      CHECK(corpus.dtype() == TokenDtype::kInt32);
      CHECK_FALSE(corpus.dictionary_size().has_value());
      CHECK(corpus.sentences() == fairseq_ids(split, lang));
    }
}

TEST_CASE("fairseq_lazy_files writes fairseq-preprocess's bytes", "[binarized][fairseq]") {
  std::vector<std::vector<int32_t>> sentences;
  for (const auto& ids : fairseq_ids("valid", "en")) sentences.emplace_back(ids.begin(), ids.end());
  const attn::data::FairseqFiles files = attn::data::fairseq_lazy_files(sentences);
  CHECK(files.data == attn::test::read_file(vector_path("own/fairseq/data-bin-lazy/valid.en-de.en.bin")));
  CHECK(files.index == attn::test::read_file(vector_path("own/fairseq/data-bin-lazy/valid.en-de.en.idx")));
}

TEST_CASE("a damaged lazy/cached index gives an error naming it", "[binarized][fairseq]") {
  const DamagedSplit split(vector_path("own/fairseq/data-bin-lazy/"));
  const uint64_t count = 20;  // sentences
  REQUIRE(split.open_with(split.good_index, split.good_data).sentences() == fairseq_ids("valid", "en"));

  CHECK_THROWS_WITH(split.open_with("TNTIDY" + split.good_index.substr(6), split.good_data),
                    Catch::Contains("not an attnlab") && Catch::Contains("mmap or lazy/cached"));
  CHECK_THROWS_WITH(split.open_with(split.good_index.substr(0, 40), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("truncated fairseq index"));
  CHECK_THROWS_WITH(split.open_with(split.patched(8, uint64_t{2}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("version 2"));
  CHECK_THROWS_WITH(split.open_with(split.patched(16, uint64_t{6}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("float64"));
  CHECK_THROWS_WITH(split.open_with(split.patched(24, uint64_t{8}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("element size 8"));
  // Counts the file cannot hold (the huge ones must not overflow), a cut or a longer file.
  for (const uint64_t wrong : {count + 1, ~uint64_t{0} / 2, ~uint64_t{0}}) {
    CHECK_THROWS_WITH(split.open_with(split.patched(32, wrong), split.good_data),
                      Catch::Contains(split.idx) && Catch::Contains("corrupt or truncated fairseq index"));
    CHECK_THROWS_WITH(split.open_with(split.patched(40, wrong), split.good_data),
                      Catch::Contains("corrupt or truncated"));
  }
  CHECK_THROWS_WITH(split.open_with(split.good_index.substr(0, split.good_index.size() - 8), split.good_data),
                    Catch::Contains("truncated"));
  CHECK_THROWS_WITH(split.open_with(split.good_index + "x", split.good_data), Catch::Contains("truncated"));
  // Dimension offsets (from byte 48), data offsets and sizes (int64 after them).
  const size_t dimensions = attn::data::kFairseqLazyHeaderBytes, data = dimensions + 8 * (count + 1),
               sizes = data + 8 * (count + 1);
  CHECK_THROWS_WITH(split.open_with(split.patched(dimensions + 8 * 4, int64_t{5}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("item 3 is not a sentence: it has 2 dimensions"));
  CHECK_THROWS_WITH(split.open_with(split.patched(sizes + 8 * 3, int64_t{0}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("sentence 3 has length 0"));
  CHECK_THROWS_WITH(split.open_with(split.patched(data + 8 * 2, int64_t{3}), split.good_data),
                    Catch::Contains(split.idx) && Catch::Contains("sentence 1 spans elements"));
  CHECK_THROWS_WITH(split.open_with(split.patched(data, int64_t{-2}), split.good_data),
                    Catch::Contains("corrupt index"));
  split.check_data_size_refused(4);  // int32 ids
  // A stored 0 is the id -1: refused, saying the ids are stored plus one.
  std::string zero_id = split.good_data;
  zero_id.replace(0, 4, std::string(4, '\0'));
  CHECK_THROWS_WITH(split.open_with(split.good_index, zero_id), Catch::Contains(split.bin) &&
                                                                    Catch::Contains("id -1, not a valid token id") &&
                                                                    Catch::Contains("stored plus one"));
}
