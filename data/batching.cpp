#include "data/batching.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/dictionary.hpp"
#include "data/seeded_shuffle.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

// Keeps the `count` smallest values of `values`, sorted.
void keep_smallest(std::vector<size_t>& values, size_t count) {
  std::sort(values.begin(), values.end());
  if (values.size() > count) values.resize(count);
}

// Sentences held in memory (e.g. lines read by `translate`), with the corpus interface the
// batching functions below use (size, length, sentence).
struct SentenceList {
  const std::vector<std::vector<int64_t>>& rows;
  size_t size() const { return rows.size(); }
  size_t length(size_t i) const { return rows[i].size(); }
  const std::vector<int64_t>& sentence(size_t i) const { return rows[i]; }
};

template <typename Corpus>
std::vector<int64_t> sentence_lengths(const Corpus& corpus) {
  std::vector<int64_t> lengths(corpus.size());
  for (size_t i = 0; i < corpus.size(); ++i) lengths[i] = int64_t(corpus.length(i));
  return lengths;
}

// Rows into a row-major [rows, width] array padded with <pad> on the chosen side.
std::vector<int64_t> pad_rows(const std::vector<std::vector<int64_t>>& rows, int64_t width, bool left_pad) {
  std::vector<int64_t> out(rows.size() * size_t(width), Dictionary::kPad);
  for (size_t r = 0; r < rows.size(); ++r) {
    size_t start = r * size_t(width) + (left_pad ? size_t(width) - rows[r].size() : 0);
    std::copy(rows[r].begin(), rows[r].end(), out.begin() + std::ptrdiff_t(start));
  }
  return out;
}

int64_t longest(const std::vector<std::vector<int64_t>>& rows) {
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.size());
  return int64_t(width);
}

// fairseq's move_eos_to_beginning: `y1 ... yn </s>` -> `</s> y1 ... yn`.
std::vector<int64_t> decoder_input(const std::vector<int64_t>& target) {
  std::vector<int64_t> shifted(target.size());
  if (shifted.empty()) return shifted;
  shifted[0] = Dictionary::kEos;
  std::copy(target.begin(), target.end() - 1, shifted.begin() + 1);
  return shifted;
}

// fairseq's collate: rows sorted by source length (longest first), then padded.
template <typename Corpus>
Batch collate(const Corpus& source, const ConcatenatedCorpus* target, std::vector<size_t> ids,
              const BatchingOptions& options) {
  std::stable_sort(ids.begin(), ids.end(), [&](size_t a, size_t b) { return source.length(a) > source.length(b); });
  Batch batch;
  batch.batch_size = int64_t(ids.size());
  std::vector<std::vector<int64_t>> sources, targets, decoder_inputs;
  for (size_t id : ids) {
    batch.ids.push_back(int64_t(id));
    sources.push_back(source.sentence(id));
    batch.source_lengths.push_back(int64_t(sources.back().size()));
    if (!target) continue;
    targets.push_back(target->sentence(id));
    decoder_inputs.push_back(decoder_input(targets.back()));
    batch.target_lengths.push_back(int64_t(targets.back().size()));
    batch.num_target_tokens += batch.target_lengths.back();
  }
  batch.source_len = longest(sources);
  batch.source_tokens = pad_rows(sources, batch.source_len, options.left_pad_source);
  if (target) {
    batch.target_len = longest(targets);
    batch.target = pad_rows(targets, batch.target_len, options.left_pad_target);
    batch.prev_output_tokens = pad_rows(decoder_inputs, batch.target_len, options.left_pad_target);
  }
  return batch;
}

// Cut size when a batch of `rows` is full: the largest multiple of `multiple`, or all rows
// when there are fewer than `multiple` (fairseq batch_by_size).
size_t cut_size(size_t rows, size_t multiple) { return rows >= multiple ? rows / multiple * multiple : rows; }

}  // namespace

std::vector<size_t> length_sorted_order(const std::vector<int64_t>& source_lengths,
                                        const std::vector<int64_t>& target_lengths, bool shuffle, uint64_t seed) {
  std::vector<size_t> order(source_lengths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (shuffle) seeded_shuffle(order, seed);
  auto by = [&order](const std::vector<int64_t>& lengths) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });
  };
  if (!target_lengths.empty()) by(target_lengths);
  by(source_lengths);
  return order;
}

std::vector<std::vector<size_t>> batch_by_size(const std::vector<size_t>& order,
                                               const std::vector<int64_t>& num_tokens, int64_t max_tokens,
                                               int64_t max_sentences, int64_t required_batch_size_multiple) {
  auto multiple = size_t(std::max<int64_t>(required_batch_size_multiple, 1));
  auto overflows = [&](const std::vector<size_t>& batch, size_t candidate) {
    int64_t width = num_tokens[candidate];
    for (size_t id : batch) width = std::max(width, num_tokens[id]);
    auto rows = int64_t(batch.size() + 1);
    return (max_sentences > 0 && rows > max_sentences) || (max_tokens > 0 && rows * width > max_tokens);
  };
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> batch;
  for (size_t id : order) {
    while (!batch.empty() && overflows(batch, id)) {
      auto cut = std::ptrdiff_t(cut_size(batch.size(), multiple));
      batches.emplace_back(batch.begin(), batch.begin() + cut);
      batch.erase(batch.begin(), batch.begin() + cut);
    }
    batch.push_back(id);
  }
  if (!batch.empty()) batches.push_back(std::move(batch));
  return batches;
}

std::string FilteredPairs::describe() const {
  if (total() == 0) return {};
  std::vector<std::string> reasons;
  if (by_positions > 0)
    reasons.push_back(fmt::format("{} longer than the maximum positions {}/{} source/target", by_positions,
                                  max_source_positions, max_target_positions));
  if (by_max_tokens > 0)
    reasons.push_back(fmt::format("{} alone longer than max tokens {}", by_max_tokens, max_tokens));
  return fmt::format("{} pairs skipped ({}), first sentence ids: {}{}", total(), fmt::join(reasons, ", "),
                     fmt::join(first_ids, ", "), total() > first_ids.size() ? ", ..." : "");
}

BatchLoader::BatchLoader(const ConcatenatedCorpus& source, const ConcatenatedCorpus& target, BatchingOptions options)
    : source_(source), target_(target), options_(options) {
  if (source.size() != target.size())
    throw DataError(fmt::format("source {} has {} sentences, target {} has {}", source.description(), source.size(),
                                target.description(), target.size()));
  std::vector<int64_t> source_lengths = sentence_lengths(source), target_lengths = sentence_lengths(target);
  std::vector<size_t> kept;
  std::vector<int64_t> num_tokens(source.size());
  filtered_.max_source_positions = options.max_source_positions;
  filtered_.max_target_positions = options.max_target_positions;
  filtered_.max_tokens = options.max_tokens;
  for (size_t id : length_sorted_order(source_lengths, target_lengths, options.shuffle, options.seed)) {
    num_tokens[id] = std::max(source_lengths[id], target_lengths[id]);
    const bool beyond_positions = source_lengths[id] > options.max_source_positions ||
                                  target_lengths[id] > options.max_target_positions;
    const bool beyond_max_tokens = options.max_tokens > 0 && num_tokens[id] > options.max_tokens;
    if (!beyond_positions && !beyond_max_tokens) {
      kept.push_back(id);
    } else if (options.oversize == OversizePolicy::kFilter) {
      ++(beyond_positions ? filtered_.by_positions : filtered_.by_max_tokens);
      filtered_.first_ids.push_back(id);
    } else {
      throw DataError(fmt::format("{}: sentence {} is too long (source {} tokens, target {} tokens; limits: "
                                  "source positions {}, target positions {}, max tokens {}); filter such pairs "
                                  "to skip them",
                                  source.description(), id, source_lengths[id], target_lengths[id],
                                  options.max_source_positions, options.max_target_positions, options.max_tokens));
    }
  }
  keep_smallest(filtered_.first_ids, FilteredPairs::kIdsShown);
  batches_ = batch_by_size(kept, num_tokens, options.max_tokens, options.max_sentences,
                           options.required_batch_size_multiple);
  start_epoch_order();
}

BatchLoader::~BatchLoader() { stop_worker(); }

void BatchLoader::start_epoch_order() {
  epoch_order_.resize(batches_.size());
  std::iota(epoch_order_.begin(), epoch_order_.end(), size_t{0});
  if (options_.shuffle && position_.epoch > options_.curriculum)
    seeded_shuffle(epoch_order_, options_.seed + uint64_t(position_.epoch));
}

void BatchLoader::restore(LoaderPosition position) {
  if (position.epoch < 1 || position.batch_index < 0 || size_t(position.batch_index) > batches_.size())
    throw DataError(fmt::format("cannot restore loader position (epoch {}, batch {}): an epoch has {} batches",
                                position.epoch, position.batch_index, batches_.size()));
  stop_worker();
  position_ = position;
  start_epoch_order();
}

Batch BatchLoader::make_batch(size_t batch_number) const {
  return collate(source_, &target_, batches_[batch_number], options_);
}

std::optional<Batch> BatchLoader::next() {
  if (size_t(position_.batch_index) == batches_.size()) {
    stop_worker();
    position_ = {position_.epoch + 1, 0};
    start_epoch_order();
    return std::nullopt;
  }
  size_t batch_number = epoch_order_[size_t(position_.batch_index)];
  ++position_.batch_index;
  if (options_.prefetch == 0) return make_batch(batch_number);
  if (!worker_.joinable()) start_worker();
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || worker_error_; });
  if (ready_.empty()) std::rethrow_exception(worker_error_);
  Batch batch = std::move(ready_.front());
  ready_.pop_front();
  changed_.notify_all();
  return batch;
}

void BatchLoader::start_worker() {
  // Prepares the batches from the one next() is about to take to the end of the epoch.
  std::vector<size_t> remaining(epoch_order_.begin() + (position_.batch_index - 1), epoch_order_.end());
  worker_ = std::thread([this, remaining = std::move(remaining)] {
    try {
      for (size_t batch_number : remaining) {
        Batch batch = make_batch(batch_number);
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return ready_.size() < options_.prefetch || stop_requested_; });
        if (stop_requested_) return;
        ready_.push_back(std::move(batch));
        changed_.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      worker_error_ = std::current_exception();
      changed_.notify_all();
    }
  });
}

void BatchLoader::stop_worker() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    changed_.notify_all();
  }
  worker_.join();
  ready_.clear();
  worker_error_ = nullptr;
  stop_requested_ = false;
}

namespace {

template <typename Corpus>
std::vector<Batch> inference_batches_of(const Corpus& source, const BatchingOptions& options) {
  std::vector<int64_t> lengths = sentence_lengths(source);
  std::vector<size_t> order = length_sorted_order(lengths, {}, false, 0);
  std::vector<Batch> batches;
  for (auto& ids : batch_by_size(order, lengths, options.max_tokens, options.max_sentences,
                                 options.required_batch_size_multiple))
    batches.push_back(collate(source, nullptr, std::move(ids), options));
  return batches;
}

}  // namespace

std::vector<Batch> inference_batches(const ConcatenatedCorpus& source, const BatchingOptions& options) {
  return inference_batches_of(source, options);
}

std::vector<Batch> inference_batches(const std::vector<std::vector<int64_t>>& sentences,
                                     const BatchingOptions& options) {
  return inference_batches_of(SentenceList{sentences}, options);
}

}  // namespace attn::data
