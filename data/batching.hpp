// Batches of token ids for training and inference, as fairseq's LanguagePairDataset and
// batch_by_size build them (docs/models.md §1.1; no tensors: data/ does not depend on the
// tensor engine, apps/ turns these arrays into tensors, docs/design.md §1).
//
// Layout of one batch of B pairs (row-major [B, L] arrays, <pad> = 1, </s> = 2):
// * source: tokens followed by </s>, padded on the left by default (left_pad_source);
// * target: tokens followed by </s>, padded on the right by default (left_pad_target);
// * prev_output_tokens (decoder input): the target with its final </s> moved to the front,
//   `</s> y1 ... y(n-1)`, padded like the target;
// * rows sorted by source length, longest first (fairseq's collate); `ids` give each row's
//   sentence index in the corpus.
//
// Ordering and batching (fairseq): a seeded random permutation, stably sorted by target
// length, then stably by source length; then batches are cut greedily in that order so that
// rows x max(max source length, max target length) <= max_tokens (padding counts) and
// rows <= max_sentences; a cut keeps a multiple of required_batch_size_multiple rows (when
// at least that many) and carries the rest into the next batch. The batches are fixed for the
// loader's life; their order is shuffled every epoch from (seed, epoch), but in the first
// `curriculum` epochs (fairseq's --curriculum), which take them in that length order.
// Pairs longer than max_source_positions / max_target_positions (lengths including </s>),
// or that alone exceed max_tokens, are filtered (and counted) or rejected with an error.
//
// A background thread prepares up to `prefetch` batches ahead. position() is (epoch, index
// of the next batch); restore(position) makes the loader yield exactly the batches it would
// have yielded from there, so training resumes mid-epoch bit-identically.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "data/concatenated_corpus.hpp"

namespace attn::data {

enum class OversizePolicy { kFilter, kReject };

struct BatchingOptions {
  int64_t max_tokens = 4096;    // <= 0: no token limit
  int64_t max_sentences = 0;    // <= 0: no sentence limit
  int64_t required_batch_size_multiple = 1;
  bool left_pad_source = true;
  bool left_pad_target = false;
  int64_t max_source_positions = 1024;
  int64_t max_target_positions = 1024;
  OversizePolicy oversize = OversizePolicy::kReject;
  bool shuffle = true;
  int64_t curriculum = 0;  // fairseq's --curriculum: epochs 1..N keep the batches in length order
  uint64_t seed = 1;
  size_t prefetch = 2;  // batches prepared ahead by the background thread; 0 = none
};

struct Batch {
  std::vector<int64_t> ids;  // [batch_size] sentence index of each row
  int64_t batch_size = 0, source_len = 0, target_len = 0;
  std::vector<int64_t> source_tokens;       // [batch_size, source_len]
  std::vector<int64_t> source_lengths;      // [batch_size], including </s>
  std::vector<int64_t> target;              // [batch_size, target_len]; empty in inference
  std::vector<int64_t> prev_output_tokens;  // [batch_size, target_len]; empty in inference
  std::vector<int64_t> target_lengths;      // [batch_size]; empty in inference
  int64_t num_target_tokens = 0;            // sum of target_lengths (fairseq "ntokens")
};

// The pairs a loader skipped as too long, by reason, for messages that say which limit
// dropped them and which sentences they were.
struct FilteredPairs {
  static constexpr size_t kIdsShown = 5;
  size_t by_positions = 0;   // longer than max_source_positions / max_target_positions
  size_t by_max_tokens = 0;  // within the positions, but alone longer than max_tokens
  std::vector<size_t> first_ids;  // the smallest sentence ids skipped, at most kIdsShown
  int64_t max_source_positions = 0, max_target_positions = 0, max_tokens = 0;  // the limits applied

  size_t total() const { return by_positions + by_max_tokens; }
  // "3 pairs skipped (2 longer than the maximum positions 20/25 source/target, 1 alone longer
  // than max tokens 10), first sentence ids: 4, 9, 12"; empty when none were.
  std::string describe() const;
};

struct LoaderPosition {
  int64_t epoch = 1;        // 1-based, as fairseq counts
  int64_t batch_index = 0;  // index of the next batch within the epoch
  bool operator==(const LoaderPosition&) const = default;
};

// fairseq's ordered_indices: permutation (seeded when shuffle), stable sort by target length
// (when given), then stable sort by source length.
std::vector<size_t> length_sorted_order(const std::vector<int64_t>& source_lengths,
                                        const std::vector<int64_t>& target_lengths, bool shuffle, uint64_t seed);
// Greedy batches over `order`; num_tokens[i] is sentence i's max(source, target) length.
std::vector<std::vector<size_t>> batch_by_size(const std::vector<size_t>& order,
                                               const std::vector<int64_t>& num_tokens, int64_t max_tokens,
                                               int64_t max_sentences, int64_t required_batch_size_multiple);

// Training loader over a source/target pair of binarized splits. The corpora must outlive it.
class BatchLoader {
 public:
  BatchLoader(const ConcatenatedCorpus& source, const ConcatenatedCorpus& target, BatchingOptions options);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  size_t num_batches() const { return batches_.size(); }  // per epoch
  size_t num_filtered() const { return filtered_.total(); }  // pairs dropped as too long
  const FilteredPairs& filtered() const { return filtered_; }
  LoaderPosition position() const { return position_; }
  // Continues from a position another loader (same data and options) reported.
  void restore(LoaderPosition position);
  // The next batch of the current epoch, or nullopt once the epoch is over (the following
  // call starts the next epoch).
  std::optional<Batch> next();
  // Whether the current epoch has no batch left: the next next() ends it.
  bool epoch_exhausted() const { return size_t(position_.batch_index) == batches_.size(); }

 private:
  void start_epoch_order();
  void start_worker();
  void stop_worker();
  Batch make_batch(size_t batch_number) const;

  const ConcatenatedCorpus& source_;
  const ConcatenatedCorpus& target_;
  BatchingOptions options_;
  std::vector<std::vector<size_t>> batches_;
  FilteredPairs filtered_;
  LoaderPosition position_;
  std::vector<size_t> epoch_order_;  // batch numbers in this epoch's order

  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> ready_;
  std::exception_ptr worker_error_;
  bool stop_requested_ = false;
};

// Inference: every source sentence once (none filtered), ordered by length, batched by
// max_tokens / max_sentences; rows carry their original sentence ids. Target fields are empty.
std::vector<Batch> inference_batches(const ConcatenatedCorpus& source, const BatchingOptions& options);
// The same over sentences held in memory (token ids, each ending in </s>).
std::vector<Batch> inference_batches(const std::vector<std::vector<int64_t>>& sentences,
                                     const BatchingOptions& options);

}  // namespace attn::data
