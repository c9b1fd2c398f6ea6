// Batching (docs/models.md §1.1): token budget with padding, every pair once per epoch,
// padding layout, decoder-input shift, seeded determinism, exact resume, length filtering.
#include <catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>

#include "data/batching.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using attn::data::Batch;
using attn::data::BatchingOptions;
using attn::data::BatchLoader;
using attn::data::BinarizedCorpus;
using attn::data::ConcatenatedCorpus;
using attn::data::LoaderPosition;

namespace {

constexpr int64_t kPad = 1, kEos = 2;
constexpr size_t kPairs = 300;

// Sentence i: source = (length_s(i) - 1) copies of source_word(i) then </s>; likewise target.
int64_t source_length(size_t i) { return 1 + int64_t((i * 37) % 29); }
int64_t target_length(size_t i) { return 1 + int64_t((i * 53 + 11) % 33); }
int32_t source_word(size_t i) { return int32_t(4 + i % 500); }
int32_t target_word(size_t i) { return int32_t(4 + (i * 7) % 500); }

std::vector<int32_t> sentence(int64_t length, int32_t word) {
  std::vector<int32_t> ids(size_t(length - 1), word);
  ids.push_back(int32_t(kEos));
  return ids;
}

// The dictionary the ids come from: the specials and madeupwords, 512 in all.
attn::data::Dictionary placeholder_dictionary() {
  attn::data::Dictionary dictionary;
  dictionary.pad_to_multiple(512);
  return dictionary;
}

// Writes the kPairs sentences of one side (length(i), word(i)) to `path` and opens it.
BinarizedCorpus write_side(const std::string& path, int64_t (*length)(size_t), int32_t (*word)(size_t)) {
  std::vector<std::vector<int32_t>> sentences;
  for (size_t i = 0; i < kPairs; ++i) sentences.push_back(sentence(length(i), word(i)));
  attn::data::write_binarized_corpus(path, sentences, placeholder_dictionary());
  return BinarizedCorpus::open(path);
}

// The synthetic corpus, binarized in a fresh folder that is removed afterwards.
struct SyntheticPair {
  attn::test::TempDir tmp;
  ConcatenatedCorpus source{write_side(tmp.file("src.bin"), source_length, source_word)};
  ConcatenatedCorpus target{write_side(tmp.file("tgt.bin"), target_length, target_word)};
};

std::vector<Batch> one_epoch(BatchLoader& loader) {
  std::vector<Batch> batches;
  while (auto batch = loader.next()) batches.push_back(std::move(*batch));
  return batches;
}

bool same_batch(const Batch& a, const Batch& b) {
  return a.ids == b.ids && a.source_tokens == b.source_tokens && a.target == b.target &&
         a.prev_output_tokens == b.prev_output_tokens && a.source_lengths == b.source_lengths;
}

bool same_batches(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), same_batch);
}

BatchingOptions options_with(int64_t max_tokens, int64_t max_sentences = 0, size_t prefetch = 2) {
  BatchingOptions options;
  options.max_tokens = max_tokens;
  options.max_sentences = max_sentences;
  options.prefetch = prefetch;
  options.seed = 3;
  return options;
}

// Row r of a [rows, width] array.
std::vector<int64_t> row(const std::vector<int64_t>& array, int64_t width, int64_t r) {
  return {array.begin() + r * width, array.begin() + (r + 1) * width};
}

std::vector<int64_t> padded(std::vector<int64_t> tokens, int64_t width, bool left) {
  std::vector<int64_t> padding(size_t(width) - tokens.size(), kPad);
  if (left) {
    padding.insert(padding.end(), tokens.begin(), tokens.end());
    return padding;
  }
  tokens.insert(tokens.end(), padding.begin(), padding.end());
  return tokens;
}

std::vector<int64_t> repeated(int64_t count, int64_t word) { return std::vector<int64_t>(size_t(count), word); }

}  // namespace

TEST_CASE("length_sorted_order sorts by source, then target, then the seeded permutation", "[batching]") {
  CHECK(attn::data::length_sorted_order({3, 1, 2, 1}, {1, 2, 1, 1}, false, 0) == std::vector<size_t>{3, 1, 2, 0});
  CHECK(attn::data::length_sorted_order({3, 1, 2}, {}, false, 0) == std::vector<size_t>{1, 2, 0});
  std::vector<int64_t> equal(20, 4);
  auto shuffled = attn::data::length_sorted_order(equal, equal, true, 5);
  CHECK(shuffled == attn::data::length_sorted_order(equal, equal, true, 5));
  CHECK(shuffled != attn::data::length_sorted_order(equal, equal, true, 6));
  CHECK(!std::is_sorted(shuffled.begin(), shuffled.end()));
}

TEST_CASE("batch_by_size cuts like fairseq, padding counts, multiples carry over", "[batching]") {
  std::vector<size_t> order{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<int64_t> tokens{2, 2, 2, 3, 3, 3, 3, 5, 5, 9};
  using Batches = std::vector<std::vector<size_t>>;
  CHECK(attn::data::batch_by_size(order, tokens, 12, 0, 1) == Batches{{0, 1, 2, 3}, {4, 5, 6}, {7, 8}, {9}});
  CHECK(attn::data::batch_by_size(order, tokens, 12, 0, 2) == Batches{{0, 1, 2, 3}, {4, 5}, {6, 7}, {8}, {9}});
  CHECK(attn::data::batch_by_size(order, tokens, 0, 3, 1) == Batches{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}});
  CHECK(attn::data::batch_by_size(order, tokens, 0, 0, 1) == Batches{order});
}

TEST_CASE("batches respect the token budget and hold every pair once per epoch", "[batching]") {
  SyntheticPair data;
  for (int64_t max_tokens : {40, 100, 333}) {
    for (int64_t max_sentences : {0, 7}) {
      BatchingOptions options = options_with(max_tokens, max_sentences);
      options.oversize = attn::data::OversizePolicy::kFilter;
      BatchLoader loader(data.source, data.target, options);
      for (int epoch = 0; epoch < 2; ++epoch) {
        std::multiset<int64_t> seen;
        size_t batches = 0;
        for (const Batch& batch : one_epoch(loader)) {
          ++batches;
          CHECK(batch.batch_size * std::max(batch.source_len, batch.target_len) <= max_tokens);
          if (max_sentences > 0) CHECK(batch.batch_size <= max_sentences);
          seen.insert(batch.ids.begin(), batch.ids.end());
        }
        CHECK(batches == loader.num_batches());
        CHECK(seen.size() + loader.num_filtered() == kPairs);
        CHECK(std::set<int64_t>(seen.begin(), seen.end()).size() == seen.size());
      }
    }
  }
}

TEST_CASE("padding layout, decoder input shift and row order", "[batching]") {
  SyntheticPair data;
  for (bool left_pad_source : {true, false}) {
    BatchingOptions options = options_with(200);
    options.left_pad_source = left_pad_source;
    BatchLoader loader(data.source, data.target, options);
    for (const Batch& batch : one_epoch(loader)) {
      REQUIRE(batch.source_tokens.size() == size_t(batch.batch_size * batch.source_len));
      REQUIRE(batch.target.size() == size_t(batch.batch_size * batch.target_len));
      int64_t target_tokens = 0;
      for (int64_t r = 0; r < batch.batch_size; ++r) {
        auto i = size_t(batch.ids[size_t(r)]);
        int64_t ls = source_length(i), lt = target_length(i);
        if (r > 0) CHECK(batch.source_lengths[size_t(r - 1)] >= ls);  // longest source first
        CHECK(batch.source_lengths[size_t(r)] == ls);
        CHECK(batch.target_lengths[size_t(r)] == lt);
        target_tokens += lt;
        auto source = repeated(ls - 1, source_word(i));
        source.push_back(kEos);
        CHECK(row(batch.source_tokens, batch.source_len, r) == padded(source, batch.source_len, left_pad_source));
        auto target = repeated(lt - 1, target_word(i));
        target.push_back(kEos);
        CHECK(row(batch.target, batch.target_len, r) == padded(target, batch.target_len, false));
        auto decoder_input = repeated(lt - 1, target_word(i));
        decoder_input.insert(decoder_input.begin(), kEos);
        CHECK(row(batch.prev_output_tokens, batch.target_len, r) == padded(decoder_input, batch.target_len, false));
      }
      CHECK(batch.num_target_tokens == target_tokens);
    }
  }
}

TEST_CASE("required batch size multiple", "[batching]") {
  SyntheticPair data;
  BatchingOptions options = options_with(400);
  options.required_batch_size_multiple = 8;
  BatchLoader loader(data.source, data.target, options);
  size_t irregular = 0;
  for (const Batch& batch : one_epoch(loader)) {
    CHECK(batch.batch_size * std::max(batch.source_len, batch.target_len) <= 400);
    if (batch.batch_size % 8 != 0 && batch.batch_size > 8) ++irregular;
  }
  CHECK(irregular <= 1);  // only the very last batch may be an irregular size above the multiple
}

TEST_CASE("batch order is shuffled per epoch and seeded", "[batching]") {
  SyntheticPair data;
  BatchLoader first(data.source, data.target, options_with(150));
  BatchLoader same(data.source, data.target, options_with(150, 0, 0));  // no prefetch: same batches
  BatchingOptions other_seed = options_with(150);
  other_seed.seed = 4;
  BatchLoader other(data.source, data.target, other_seed);
  auto epoch1 = one_epoch(first), epoch2 = one_epoch(first);
  CHECK(same_batches(epoch1, one_epoch(same)));
  CHECK(same_batches(epoch2, one_epoch(same)));
  CHECK(!same_batches(epoch1, epoch2));
  CHECK(!same_batches(epoch1, one_epoch(other)));
  // Same batches, other order: the set of batches is fixed for the loader's life.
  auto ids_of = [](const std::vector<Batch>& batches) {
    std::set<std::vector<int64_t>> ids;
    for (const Batch& batch : batches) ids.insert(batch.ids);
    return ids;
  };
  CHECK(ids_of(epoch1) == ids_of(epoch2));
  CHECK(first.position() == LoaderPosition{3, 0});
}

TEST_CASE("--curriculum N: the first N epochs take the batches in length order, later ones shuffled as without it",
          "[batching]") {
  SyntheticPair data;
  BatchingOptions options = options_with(150);
  options.curriculum = 2;
  BatchLoader curriculum(data.source, data.target, options);
  BatchLoader plain(data.source, data.target, options_with(150));
  const auto epoch1 = one_epoch(curriculum), epoch2 = one_epoch(curriculum), epoch3 = one_epoch(curriculum);
  CHECK(same_batches(epoch1, epoch2));  // unshuffled, both
  int64_t longest = 0;
  for (const Batch& batch : epoch1) {  // shortest first: the length grows from batch to batch
    CHECK(batch.source_len >= longest);
    longest = batch.source_len;
  }
  one_epoch(plain);
  one_epoch(plain);
  CHECK(same_batches(epoch3, one_epoch(plain)));
  CHECK(!same_batches(epoch3, epoch1));
  BatchLoader resumed(data.source, data.target, options);  // a resume inside the curriculum
  resumed.restore({2, 3});
  CHECK(same_batches(one_epoch(resumed), std::vector<Batch>(epoch2.begin() + 3, epoch2.end())));
}

TEST_CASE("a restored position yields the identical remaining batches", "[batching]") {
  SyntheticPair data;
  BatchLoader reference(data.source, data.target, options_with(120));
  one_epoch(reference);
  for (int k = 0; k < 5; ++k) reference.next();
  LoaderPosition saved = reference.position();
  CHECK(saved == LoaderPosition{2, 5});
  auto rest = one_epoch(reference);
  auto following = one_epoch(reference);

  for (size_t prefetch : {size_t{0}, size_t{3}}) {
    BatchLoader resumed(data.source, data.target, options_with(120, 0, prefetch));
    resumed.next();  // a loader in another state, about to be repositioned
    resumed.restore(saved);
    CHECK(resumed.position() == saved);
    CHECK(same_batches(one_epoch(resumed), rest));
    CHECK(same_batches(one_epoch(resumed), following));
  }
  BatchLoader at_end(data.source, data.target, options_with(120));
  at_end.restore({1, int64_t(at_end.num_batches())});
  CHECK(!at_end.next());
  CHECK(at_end.position() == LoaderPosition{2, 0});
  CHECK_THROWS_AS(at_end.restore({1, int64_t(at_end.num_batches()) + 1}), attn::data::DataError);
  CHECK_THROWS_AS(at_end.restore({0, 0}), attn::data::DataError);
}

TEST_CASE("pairs longer than the position limits are filtered with a count or rejected", "[batching]") {
  SyntheticPair data;
  BatchingOptions options = options_with(1000);
  options.max_source_positions = 20;
  options.max_target_positions = 25;
  size_t expected = 0;
  for (size_t i = 0; i < kPairs; ++i) expected += source_length(i) > 20 || target_length(i) > 25;
  REQUIRE(expected > 0);
  CHECK_THROWS_WITH(BatchLoader(data.source, data.target, options), Catch::Contains("too long"));
  options.oversize = attn::data::OversizePolicy::kFilter;
  BatchLoader loader(data.source, data.target, options);
  CHECK(loader.num_filtered() == expected);
  for (const Batch& batch : one_epoch(loader)) {
    CHECK(batch.source_len <= 20);
    CHECK(batch.target_len <= 25);
  }
  // A pair that alone exceeds max_tokens is too long as well.
  BatchingOptions tight = options_with(10);
  tight.oversize = attn::data::OversizePolicy::kFilter;
  size_t over_budget = 0;
  for (size_t i = 0; i < kPairs; ++i) over_budget += std::max(source_length(i), target_length(i)) > 10;
  CHECK(BatchLoader(data.source, data.target, tight).num_filtered() == over_budget);
}

TEST_CASE("filtered pairs are counted by the limit that dropped them and named by their first ids", "[batching]") {
  SyntheticPair data;
  BatchingOptions options = options_with(22);
  options.max_source_positions = 20;
  options.max_target_positions = 25;
  options.oversize = attn::data::OversizePolicy::kFilter;
  size_t by_positions = 0, by_max_tokens = 0;
  std::vector<size_t> ids;
  for (size_t i = 0; i < kPairs; ++i) {
    const bool positions = source_length(i) > 20 || target_length(i) > 25;
    const bool tokens = std::max(source_length(i), target_length(i)) > 22;
    by_positions += positions;
    by_max_tokens += !positions && tokens;
    if (positions || tokens) ids.push_back(i);
  }
  REQUIRE(by_positions > 0);
  REQUIRE(by_max_tokens > 0);
  REQUIRE(ids.size() > attn::data::FilteredPairs::kIdsShown);
  const BatchLoader loader(data.source, data.target, options);
  const attn::data::FilteredPairs& filtered = loader.filtered();
  CHECK(filtered.by_positions == by_positions);
  CHECK(filtered.by_max_tokens == by_max_tokens);
  ids.resize(attn::data::FilteredPairs::kIdsShown);
  CHECK(filtered.first_ids == ids);
  const std::string text = filtered.describe();
  CHECK_THAT(text, Catch::StartsWith(std::to_string(by_positions + by_max_tokens) + " pairs skipped"));
  CHECK_THAT(text, Catch::Contains(std::to_string(by_positions) + " longer than the maximum positions 20/25"));
  CHECK_THAT(text, Catch::Contains(std::to_string(by_max_tokens) + " alone longer than max tokens 22"));
  CHECK_THAT(text, Catch::Contains("first sentence ids: " + std::to_string(ids[0]) + ", "));
  CHECK_THAT(text, Catch::EndsWith(", ..."));
  CHECK(BatchLoader(data.source, data.target, options_with(1000)).filtered().describe().empty());
}

TEST_CASE("mismatched source and target corpora are rejected", "[batching]") {
  SyntheticPair data;
  attn::data::write_binarized_corpus(data.tmp.file("short.bin"), {{5, 2}}, placeholder_dictionary());
  const ConcatenatedCorpus short_target{BinarizedCorpus::open(data.tmp.file("short.bin"))};
  CHECK_THROWS_WITH(BatchLoader(data.source, short_target, options_with(100)), Catch::Contains("1 sentences") || Catch::Contains("has 1"));
}

TEST_CASE("inference batches hold every sentence once, ordered by length, with ids", "[batching]") {
  SyntheticPair data;
  BatchingOptions options = options_with(64);
  auto batches = attn::data::inference_batches(data.source, options);
  std::vector<int64_t> ids;
  int64_t previous_longest = 0;
  for (const Batch& batch : batches) {
    CHECK(batch.target.empty());
    CHECK(batch.source_len >= previous_longest);  // batches come in length order
    previous_longest = batch.source_len;
    CHECK(batch.batch_size * batch.source_len <= 64);
    for (int64_t r = 0; r < batch.batch_size; ++r) {
      auto i = size_t(batch.ids[size_t(r)]);
      CHECK(batch.source_lengths[size_t(r)] == source_length(i));
      CHECK(row(batch.source_tokens, batch.source_len, r).back() == kEos);  // left-padded
    }
    ids.insert(ids.end(), batch.ids.begin(), batch.ids.end());
  }
  std::sort(ids.begin(), ids.end());
  std::vector<int64_t> all(kPairs);
  for (size_t i = 0; i < kPairs; ++i) all[i] = int64_t(i);
  CHECK(ids == all);
}

TEST_CASE("inference batches of sentences in memory equal those of the binarized corpus", "[batching]") {
  SyntheticPair data;
  const std::vector<std::vector<int64_t>> sentences = data.source.sentences();
  for (int64_t max_tokens : {0, 12, 64}) {
    BatchingOptions options = options_with(max_tokens);
    options.max_sentences = max_tokens == 0 ? 3 : 0;
    const auto from_corpus = attn::data::inference_batches(data.source, options);
    const auto from_memory = attn::data::inference_batches(sentences, options);
    REQUIRE(from_memory.size() == from_corpus.size());
    for (size_t b = 0; b < from_corpus.size(); ++b) {
      CHECK(from_memory[b].ids == from_corpus[b].ids);
      CHECK(from_memory[b].source_tokens == from_corpus[b].source_tokens);
      CHECK(from_memory[b].source_lengths == from_corpus[b].source_lengths);
    }
  }
}

TEST_CASE("a combined split reads its parts in order, the primary repeated, and a loader covers them all", "[batching]") {
  attn::test::TempDir tmp;
  const attn::data::Dictionary dictionary = placeholder_dictionary();
  auto part = [&](const std::string& name, std::vector<std::vector<int32_t>> sentences) {
    attn::data::write_binarized_corpus(tmp.file(name), sentences, dictionary);
    return BinarizedCorpus::open(tmp.file(name));
  };
  auto parts = [&] {  // the primary: 2 sentences; then 1 and 3
    std::vector<BinarizedCorpus> all;
    all.push_back(part("p0", {{5, kEos}, {6, 6, kEos}}));
    all.push_back(part("p1", {{7, kEos}}));
    all.push_back(part("p2", {{8, kEos}, {9, kEos}, {10, 10, 10, kEos}}));
    return all;
  };
  const ConcatenatedCorpus combined(parts(), 3);
  REQUIRE(combined.size() == 3 * 2 + 1 + 3);
  const std::vector<std::vector<int64_t>> expected = {{5, kEos}, {6, 6, kEos}, {5, kEos}, {6, 6, kEos}, {5, kEos},
                                                      {6, 6, kEos}, {7, kEos}, {8, kEos}, {9, kEos}, {10, 10, 10, kEos}};
  CHECK(combined.sentences() == expected);
  for (size_t i = 0; i < expected.size(); ++i) CHECK(combined.length(i) == expected[i].size());
  CHECK(combined.description() == tmp.file("p0") + " (×3) + " + tmp.file("p1") + " + " + tmp.file("p2"));
  CHECK_THROWS_WITH(combined.sentence(10), Catch::Contains("sentence 10 of 10"));

  // Source and target combined alike: every pair of the epoch once, the primary's three times.
  const ConcatenatedCorpus target(parts(), 3);
  BatchLoader loader(combined, target, options_with(6));
  std::vector<int64_t> seen;
  for (const Batch& batch : one_epoch(loader)) {
    seen.insert(seen.end(), batch.ids.begin(), batch.ids.end());
    for (int64_t r = 0; r < batch.batch_size; ++r)  // each row's source is its target here
      CHECK(batch.source_lengths[size_t(r)] == batch.target_lengths[size_t(r)]);
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int64_t> all(expected.size());
  std::iota(all.begin(), all.end(), int64_t(0));
  CHECK(seen == all);
}
