// subword-nmt-compatible BPE learning (docs/mt-tools.md §1.1). The names in comments
// (stats, big_stats, indices, replace_pair, update_pair_statistics, prune_stats) are the
// upstream ones; each step below does what its namesake does, on integer ids.
#include "data/bpe_learn.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/core.h>

#include "data/bpe_apply.hpp"
#include "data/text_io.hpp"

namespace attn::data {

void WordCounts::add(std::string_view word, int64_t count) {
  auto found = index_.find(word);
  if (found != index_.end()) {
    items_[found->second].second += count;
    return;
  }
  index_.emplace(std::string(word), items_.size());
  items_.emplace_back(std::string(word), count);
}

void count_words(const TextLines& text, WordCounts& counts) {
  for (std::string_view line : text.lines)
    for (std::string_view word : split_words(line)) counts.add(word, 1);
}

void read_dictionary(const TextLines& text, const std::string& name, WordCounts& counts) {
  for (size_t i = 0; i < text.lines.size(); ++i) {
    std::string_view line = strip_line(text.lines[i]);
    size_t space = line.find(' ');
    std::string_view word = line.substr(0, space), number;
    if (space != std::string_view::npos) number = line.substr(space + 1);
    int64_t count = 0;
    auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), count);
    if (space == std::string_view::npos || error != std::errc() || end != number.data() + number.size())
      throw DataError(fmt::format("{}:{}: expected 'word count' (one space), got '{}'", name, i + 1, line));
    // subword-nmt adds a negative count up silently; no word occurs fewer than zero times.
    if (count < 0)
      throw DataError(fmt::format("{}:{}: negative count '{}' (a count is how often the word occurred)", name, i + 1,
                                  number));
    counts.add(word, count);
  }
}

namespace {

using SymbolId = uint32_t;
using PairId = uint32_t;
using WordId = uint32_t;

constexpr std::string_view kEndOfWord = "</w>";

class SymbolTable {
 public:
  SymbolId intern(std::string_view text) {
    auto found = ids_.find(text);
    if (found != ids_.end()) return found->second;
    SymbolId id = static_cast<SymbolId>(texts_.size());
    texts_.emplace_back(text);
    ids_.emplace(std::string(text), id);
    return id;
  }
  const std::string& text(SymbolId id) const { return texts_[id]; }

 private:
  std::vector<std::string> texts_;
  StringMap<SymbolId> ids_;
};

struct Word {
  std::vector<SymbolId> symbols;
  int64_t frequency;
  bool has_python_space;  // a character other than ' ' that Python's `\s` matches
  std::vector<std::pair<PairId, int32_t>> pair_counts;  // indices[pair][this word], nonzero only
};

struct PairState {
  PairState(SymbolId left_symbol, SymbolId right_symbol) : left(left_symbol), right(right_symbol) {}
  SymbolId left, right;
  int64_t count = 0;     // stats[pair], meaningful while `live`
  int64_t big = 0;       // big_stats[pair]
  bool live = false;     // the pair is a key of stats (pruning removes it)
  bool dirty = false;    // count changed since its last heap entry
  uint32_t version = 0;  // heap entries with another version are stale
  std::vector<WordId> words;  // words whose indices[pair] entry may be nonzero (may repeat)
};

struct HeapEntry {
  int64_t count;
  PairId pair;
  uint32_t version;
};

class BpeLearner {
 public:
  explicit BpeLearner(const WordCounts& vocabulary);
  BpeLearnResult run(const BpeLearnOptions& options);

 private:
  // (count, left, right) order of Python's max(stats, key=lambda p: (stats[p], p)).
  bool ranks_below(int64_t count_a, PairId a, int64_t count_b, PairId b) const;
  PairId pair_id(SymbolId left, SymbolId right);
  void add_to_stats(PairId pair, int64_t delta);
  void add_to_index(PairId pair, WordId word, int32_t delta);
  int32_t index_count(PairId pair, WordId word) const;
  void clear_index(PairId pair);
  void push_dirty_pairs();
  const PairState* best_live_pair();
  void prune_stats(double threshold);
  PairId restore_full_stats(int64_t iteration, double& threshold);
  void merge(PairId pair);
  void replace_pair_in_word(const PairState& pair, SymbolId merged, Word& word);
  void update_pair_statistics(const PairState& pair, SymbolId merged, WordId word,
                              const std::vector<SymbolId>& old_symbols);

  SymbolTable symbols_;
  std::vector<Word> words_;
  std::vector<PairState> pairs_;
  std::unordered_map<uint64_t, PairId> pair_ids_;
  std::vector<PairId> live_pairs_, dirty_pairs_;
  std::vector<HeapEntry> heap_;
  std::vector<SymbolId> scratch_symbols_;
};

BpeLearner::BpeLearner(const WordCounts& vocabulary) {
  // sorted_vocab: by frequency, descending, stable.
  std::vector<const std::pair<std::string, int64_t>*> sorted;
  for (const auto& item : vocabulary.items()) sorted.push_back(&item);
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->second > b->second; });
  for (const auto* item : sorted) {
    std::vector<std::string_view> chars = split_code_points(item->first);
    Word word{{}, item->second, contains_python_space(item->first), {}};
    for (size_t k = 0; k + 1 < chars.size(); ++k) word.symbols.push_back(symbols_.intern(chars[k]));
    word.symbols.push_back(symbols_.intern(std::string(chars.back()) + std::string(kEndOfWord)));
    words_.push_back(std::move(word));
  }
  // get_pair_statistics: every adjacent position, overlaps included.
  for (WordId w = 0; w < words_.size(); ++w) {
    const auto& s = words_[w].symbols;
    for (size_t k = 0; k + 1 < s.size(); ++k) {
      PairId p = pair_id(s[k], s[k + 1]);
      add_to_stats(p, words_[w].frequency);
      add_to_index(p, w, 1);
    }
  }
  for (auto& pair : pairs_) pair.big = pair.count;  // big_stats = copy(stats)
  push_dirty_pairs();
}

bool BpeLearner::ranks_below(int64_t count_a, PairId a, int64_t count_b, PairId b) const {
  if (count_a != count_b) return count_a < count_b;
  const PairState &pa = pairs_[a], &pb = pairs_[b];
  int left = symbols_.text(pa.left).compare(symbols_.text(pb.left));
  if (left != 0) return left < 0;
  return symbols_.text(pa.right).compare(symbols_.text(pb.right)) < 0;
}

PairId BpeLearner::pair_id(SymbolId left, SymbolId right) {
  uint64_t key = (uint64_t(left) << 32) | right;
  auto [it, inserted] = pair_ids_.try_emplace(key, static_cast<PairId>(pairs_.size()));
  if (inserted) pairs_.emplace_back(left, right);
  return it->second;
}

void BpeLearner::add_to_stats(PairId pair, int64_t delta) {
  PairState& state = pairs_[pair];
  if (!state.live) {  // stats is a defaultdict: a pruned pair comes back holding only the delta
    state.live = true;
    state.count = 0;
    live_pairs_.push_back(pair);
  }
  state.count += delta;
  if (!state.dirty) {
    state.dirty = true;
    dirty_pairs_.push_back(pair);
  }
}

void BpeLearner::add_to_index(PairId pair, WordId word, int32_t delta) {
  auto& counts = words_[word].pair_counts;
  auto found = std::find_if(counts.begin(), counts.end(), [&](const auto& e) { return e.first == pair; });
  if (found == counts.end()) {
    counts.emplace_back(pair, delta);
    pairs_[pair].words.push_back(word);
    return;
  }
  found->second += delta;
  if (found->second == 0) {
    *found = counts.back();
    counts.pop_back();
  }
}

int32_t BpeLearner::index_count(PairId pair, WordId word) const {
  for (const auto& [p, count] : words_[word].pair_counts)
    if (p == pair) return count;
  return 0;
}

void BpeLearner::clear_index(PairId pair) {
  for (WordId w : pairs_[pair].words) {
    auto& counts = words_[w].pair_counts;
    auto found = std::find_if(counts.begin(), counts.end(), [&](const auto& e) { return e.first == pair; });
    if (found == counts.end()) continue;
    *found = counts.back();
    counts.pop_back();
  }
  pairs_[pair].words.clear();
}

void BpeLearner::push_dirty_pairs() {
  auto below = [this](const HeapEntry& a, const HeapEntry& b) { return ranks_below(a.count, a.pair, b.count, b.pair); };
  for (PairId p : dirty_pairs_) {
    PairState& state = pairs_[p];
    state.dirty = false;
    if (!state.live) continue;
    heap_.push_back({state.count, p, ++state.version});
    std::push_heap(heap_.begin(), heap_.end(), below);
  }
  dirty_pairs_.clear();
}

const PairState* BpeLearner::best_live_pair() {
  auto below = [this](const HeapEntry& a, const HeapEntry& b) { return ranks_below(a.count, a.pair, b.count, b.pair); };
  while (!heap_.empty()) {
    const HeapEntry& top = heap_.front();
    const PairState& state = pairs_[top.pair];
    if (state.live && state.version == top.version) return &state;
    std::pop_heap(heap_.begin(), heap_.end(), below);
    heap_.pop_back();
  }
  return nullptr;
}

void BpeLearner::prune_stats(double threshold) {
  size_t kept = 0;
  for (PairId p : live_pairs_) {
    PairState& state = pairs_[p];
    if (static_cast<double>(state.count) >= threshold) {
      live_pairs_[kept++] = p;
      continue;
    }
    state.live = false;
    ++state.version;
    state.big = state.count < 0 ? state.big + state.count : state.count;
  }
  live_pairs_.resize(kept);
}

// stats = copy(big_stats); most_frequent = max(stats); threshold = f * i / (i + 10000.0);
// prune_stats(stats, big_stats, threshold). Called when stats holds nothing above the old
// threshold, i.e. right after every live pair has been pruned into big_stats.
PairId BpeLearner::restore_full_stats(int64_t iteration, double& threshold) {
  PairId best = 0;
  for (PairId p = 1; p < pairs_.size(); ++p)
    if (ranks_below(pairs_[best].big, best, pairs_[p].big, p)) best = p;
  threshold = static_cast<double>(pairs_[best].big * iteration) / (static_cast<double>(iteration) + 10000.0);
  heap_.clear();
  live_pairs_.clear();
  for (PairId p = 0; p < pairs_.size(); ++p) {
    PairState& state = pairs_[p];
    state.count = state.big;
    ++state.version;
    state.live = static_cast<double>(state.count) >= threshold;
    if (!state.live) {
      if (state.count < 0) state.big += state.count;
      continue;
    }
    live_pairs_.push_back(p);
    heap_.push_back({state.count, p, state.version});
  }
  std::make_heap(heap_.begin(), heap_.end(),
                 [this](const HeapEntry& a, const HeapEntry& b) { return ranks_below(a.count, a.pair, b.count, b.pair); });
  return best;
}

// replace_pair for one word: upstream substitutes the regex (?<!\S)LEFT RIGHT(?!\S) in the
// space-joined symbols. Without characters that `\s` matches (other than the joining
// spaces) that is a left-to-right, non-overlapping scan over symbols; otherwise the string
// substitution is replayed, since a match can then begin or end inside a symbol.
void BpeLearner::replace_pair_in_word(const PairState& pair, SymbolId merged, Word& word) {
  const auto& old_symbols = word.symbols;
  std::vector<SymbolId> replaced;
  replaced.reserve(old_symbols.size());
  if (!word.has_python_space) {
    for (size_t k = 0; k < old_symbols.size(); ++k) {
      if (k + 1 < old_symbols.size() && old_symbols[k] == pair.left && old_symbols[k + 1] == pair.right) {
        replaced.push_back(merged);
        ++k;
      } else {
        replaced.push_back(old_symbols[k]);
      }
    }
    word.symbols = std::move(replaced);
    return;
  }
  std::string joined;
  for (size_t k = 0; k < old_symbols.size(); ++k) {
    if (k) joined += ' ';
    joined += symbols_.text(old_symbols[k]);
  }
  const std::string pattern = symbols_.text(pair.left) + ' ' + symbols_.text(pair.right);
  auto space_before = [&](size_t pos) {
    if (pos == 0) return true;
    return is_python_space(decode_code_point(joined, code_point_start(joined, pos - 1)));
  };
  auto space_at = [&](size_t pos) { return pos == joined.size() || is_python_space(decode_code_point(joined, pos)); };
  std::string substituted;
  size_t copied = 0;
  for (size_t pos = joined.find(pattern); pos != std::string::npos; pos = joined.find(pattern, pos)) {
    if (!space_before(pos) || !space_at(pos + pattern.size())) {
      ++pos;
      continue;
    }
    substituted.append(joined, copied, pos - copied);
    substituted += symbols_.text(merged);
    pos += pattern.size();
    copied = pos;
  }
  substituted.append(joined, copied);
  for (std::string_view piece : split_words(substituted)) replaced.push_back(symbols_.intern(piece));
  word.symbols = std::move(replaced);
}

// update_pair_statistics for one changed word, verbatim: remove the pairs around each
// occurrence of (left, right) in the old word, add the pairs around each occurrence of the
// merged symbol in the new word (including occurrences that existed before this merge).
void BpeLearner::update_pair_statistics(const PairState& pair, SymbolId merged, WordId w,
                                        const std::vector<SymbolId>& old_symbols) {
  const int64_t freq = words_[w].frequency;
  const SymbolId first = pair.left, second = pair.right;
  auto change = [&](SymbolId a, SymbolId b, int32_t sign) {
    PairId p = pair_id(a, b);
    add_to_stats(p, sign * freq);
    add_to_index(p, w, sign);
  };
  const auto& old_word = old_symbols;
  const ptrdiff_t n = static_cast<ptrdiff_t>(old_word.size());
  for (ptrdiff_t i = 0; i < n;) {
    if (old_word[i] != first) { ++i; continue; }
    if (i < n - 1 && old_word[i + 1] == second) {
      if (i > 0) change(old_word[i - 1], old_word[i], -1);
      if (i < n - 2 && (old_word[i + 2] != first || i >= n - 3 || old_word[i + 3] != second))
        change(old_word[i + 1], old_word[i + 2], -1);
      i += 2;
    } else {
      ++i;
    }
  }
  const std::vector<SymbolId>& new_word = words_[w].symbols;
  const ptrdiff_t m = static_cast<ptrdiff_t>(new_word.size());
  for (ptrdiff_t i = 0; i < m; ++i) {
    if (new_word[i] != merged) continue;
    if (i > 0) change(new_word[i - 1], new_word[i], +1);
    if (i < m - 1 && new_word[i + 1] != merged) change(new_word[i], new_word[i + 1], +1);
  }
}

void BpeLearner::merge(PairId p) {
  const PairState pair(pairs_[p].left, pairs_[p].right);
  const SymbolId merged = symbols_.intern(symbols_.text(pair.left) + symbols_.text(pair.right));
  // replace_pair: every word with indices[pair][word] >= 1, changed or not.
  std::vector<WordId> candidates = pairs_[p].words;
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<WordId> changed;
  std::vector<size_t> old_offsets{0};
  scratch_symbols_.clear();
  for (WordId w : candidates) {
    if (index_count(p, w) < 1) continue;
    changed.push_back(w);
    scratch_symbols_.insert(scratch_symbols_.end(), words_[w].symbols.begin(), words_[w].symbols.end());
    old_offsets.push_back(scratch_symbols_.size());
    replace_pair_in_word(pair, merged, words_[w]);
  }
  // update_pair_statistics: stats[pair] = 0, indices[pair] = {}, then the neighbours.
  add_to_stats(p, -pairs_[p].count);
  clear_index(p);
  std::vector<SymbolId> old_symbols;
  for (size_t k = 0; k < changed.size(); ++k) {
    old_symbols.assign(scratch_symbols_.begin() + old_offsets[k], scratch_symbols_.begin() + old_offsets[k + 1]);
    update_pair_statistics(pair, merged, changed[k], old_symbols);
  }
  add_to_stats(p, -pairs_[p].count);  // stats[most_frequent] = 0
}

BpeLearnResult BpeLearner::run(const BpeLearnOptions& options) {
  if (options.min_frequency < 1)
    throw DataError(fmt::format("BPE: --min-frequency must be at least 1, got {}", options.min_frequency));
  BpeLearnResult result;
  if (pairs_.empty()) return result;  // only one-character words: nothing to merge
  double threshold = static_cast<double>(best_live_pair()->count) / 10.0;
  for (int64_t i = 0; i < options.num_symbols; ++i) {
    const PairState* best = best_live_pair();
    if (best == nullptr || (i > 0 && static_cast<double>(best->count) < threshold)) {
      // we probably missed the best pair because of pruning; go back to full statistics
      prune_stats(threshold);
      best = &pairs_[restore_full_stats(i, threshold)];
    }
    if (best->count < options.min_frequency) {
      result.stopped_by_min_frequency = true;
      break;
    }
    result.merges.push_back({symbols_.text(best->left), symbols_.text(best->right), best->count});
    merge(static_cast<PairId>(best - pairs_.data()));
    push_dirty_pairs();
    if (i % 100 == 0) prune_stats(threshold);
  }
  return result;
}

std::string to_vocabulary_file(const WordCounts& counts) {
  std::vector<const std::pair<std::string, int64_t>*> sorted;
  for (const auto& item : counts.items()) sorted.push_back(&item);
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->second > b->second; });
  std::string out;
  for (const auto* item : sorted) out += fmt::format("{} {}\n", item->first, item->second);
  return out;
}

}  // namespace

BpeLearnResult learn_bpe(const WordCounts& vocabulary, const BpeLearnOptions& options) {
  return BpeLearner(vocabulary).run(options);
}

std::string format_bpe_codes(const std::vector<BpeMerge>& merges) {
  std::string out = "#version: 0.2\n";
  for (const auto& merge : merges) {
    out += merge.left;
    out += ' ';
    out += merge.right;
    out += '\n';
  }
  return out;
}

std::string format_merge_trace(size_t rank, const BpeMerge& merge) {
  return fmt::format("pair {}: {} {} -> {}{} (frequency {})\n", rank, merge.left, merge.right, merge.left,
                     merge.right, merge.frequency);
}

JointBpeResult learn_joint_bpe(const std::vector<std::string>& input_paths, const BpeLearnOptions& options) {
  // Upstream reads the inputs through codecs (splitlines), applies the codes with a plain
  // text reader (universal newlines) and counts the output through codecs again.
  std::vector<std::string> texts;
  WordCounts all_words;
  for (const auto& path : input_paths) {
    texts.push_back(read_utf8_file(path));
    count_words(split_lines(texts.back(), LineMode::SplitLines), all_words);
  }
  JointBpeResult result{learn_bpe(all_words, options), {}};
  BpeEncoder encoder(BpeCodes::parse(format_bpe_codes(result.codes.merges), "<learned codes>"), BpeApplyOptions{});
  for (auto& text : texts) {
    std::string segmented = encoder.apply(split_lines(std::move(text), LineMode::Universal));
    WordCounts subwords;
    count_words(split_lines(std::move(segmented), LineMode::SplitLines), subwords);
    result.vocabularies.push_back(to_vocabulary_file(subwords));
  }
  return result;
}

}  // namespace attn::data
