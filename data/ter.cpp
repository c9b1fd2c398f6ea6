// TER's shift search and beam edit distance, sacreBLEU's arithmetic and its output lines; see
// ter.hpp and docs/mt-tools.md §3.10.
#include "data/ter.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include <fmt/core.h>

#include "data/bleu.hpp"
#include "data/reference_streams.hpp"
#include "data/sacrebleu_output.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

// sacreBLEU's (and Tercom's) limits on the shift search and the edit distance's beam.
constexpr size_t kMaxShiftSize = 10;        // words in one shifted run
constexpr int64_t kMaxShiftDistance = 50;   // between the run in the hypothesis and in the reference
constexpr int64_t kBeamWidth = 25;          // cells on each side of the diagonal
constexpr int kMaxShiftCandidates = 1000;   // candidates evaluated per hypothesis and reference
// The cost of a cell the beam never reached. Costs are compared, and one more than this added
// to, exactly as in sacreBLEU's Python integers.
constexpr int64_t kInfinity = 10'000'000'000'000'000;

// The last edit of an optimal path to a cell, rewriting the hypothesis into the reference.
enum Edit : char { kMatch = ' ', kSubstitute = 's', kInsert = 'i', kDelete = 'd', kUnreached = 'x' };

struct Cell {
  int64_t cost = kInfinity;
  Edit edit = kUnreached;
};

// Row i of the edit-distance matrix (after i hypothesis words): the cells of its beam,
// [first, first + cells.size()); every other cell is unreached.
struct Row {
  size_t first = 0;
  std::vector<Cell> cells;

  Cell at(size_t j) const { return j >= first && j - first < cells.size() ? cells[j - first] : Cell{}; }
};

// Words as integers: equal words, equal ids (the only comparison TER makes).
using Words = std::vector<int>;

// The edit distance from hypotheses of one length to one reference, restricted to the beam.
class BeamEditDistance {
 public:
  BeamEditDistance(const Words& reference, size_t hypothesis_length)
      : reference_(reference), hypothesis_length_(hypothesis_length) {
    // The diagonal runs from (0, 0) to (n_hyp, n_ref); the ratio is a Python float.
    ratio_ = hypothesis_length == 0 ? 1.0 : double(reference.size()) / double(hypothesis_length);
    // So wide that consecutive rows' beams still overlap when the reference is far longer.
    width_ = double(kBeamWidth) < ratio_ / 2 ? int64_t(std::ceil(ratio_ / 2 + double(kBeamWidth))) : kBeamWidth;
  }

  // Row 0: j insertions make the first j reference words.
  Row first_row() const {
    Row row;
    for (size_t j = 0; j <= reference_.size(); ++j) row.cells.push_back({int64_t(j), kInsert});
    return row;
  }

  // Row i from row i − 1 and the i-th hypothesis word. Among equal costs a match or
  // substitution wins over a deletion, and a deletion over an insertion.
  void next_row(const Row& previous, int word, size_t i, Row& row) const {
    const auto [first, end] = beam(i);
    row.first = first;
    row.cells.assign(end - first, Cell{});
    for (size_t j = first; j < end; ++j) {
      Cell& cell = row.cells[j - first];
      if (j == 0) {
        cell = {previous.at(0).cost + 1, kDelete};
        continue;
      }
      const bool same = word == reference_[j - 1];
      improve(cell, previous.at(j - 1).cost + (same ? 0 : 1), same ? kMatch : kSubstitute);
      improve(cell, previous.at(j).cost + 1, kDelete);
      if (j > first) improve(cell, row.cells[j - 1 - first].cost + 1, kInsert);  // else unreached: no better
    }
  }

  // Every row of `hypothesis`'s matrix.
  std::vector<Row> rows(const Words& hypothesis) const {
    std::vector<Row> rows(hypothesis.size() + 1);
    rows[0] = first_row();
    for (size_t i = 1; i <= hypothesis.size(); ++i) next_row(rows[i - 1], hypothesis[i - 1], i, rows[i]);
    return rows;
  }

  // The distance of `hypothesis` whose first `prefix` words are those whose row `prefix_row` is
  // (rows depend only on the words before them): only the rows after it are computed.
  int64_t distance_after(const Row& prefix_row, size_t prefix, const Words& hypothesis) const {
    Row previous = prefix_row, row;
    for (size_t i = prefix + 1; i <= hypothesis.size(); ++i) {
      next_row(previous, hypothesis[i - 1], i, row);
      std::swap(previous, row);
    }
    return previous.at(reference_.size()).cost;
  }

  int64_t distance(const std::vector<Row>& rows) const { return rows.back().at(reference_.size()).cost; }

  // The edits of the path back from the last cell, in order from the first words.
  std::string trace(const std::vector<Row>& rows) const {
    std::string edits;
    size_t i = rows.size() - 1, j = reference_.size();
    while (i > 0 || j > 0) {
      const Edit edit = rows[i].at(j).edit;
      edits.push_back(edit);
      if (edit == kMatch || edit == kSubstitute) {
        --i;
        --j;
      } else if (edit == kInsert) {
        --j;
      } else if (edit == kDelete) {
        --i;
      } else {
        throw DataError("TER: the edit path left the beam");  // a finite cost always comes from a reached cell
      }
    }
    std::reverse(edits.begin(), edits.end());
    return edits;
  }

 private:
  static void improve(Cell& cell, int64_t cost, Edit edit) {
    if (cost < cell.cost) cell = {cost, edit};
  }

  // The cells [first, end) computed in row i: the beam around floor(i · ratio), the whole rest of
  // the row in the last one.
  std::pair<size_t, size_t> beam(size_t i) const {
    const int64_t diagonal = int64_t(std::floor(double(i) * ratio_));
    const int64_t row_end = int64_t(reference_.size()) + 1;
    const int64_t first = std::max<int64_t>(0, diagonal - width_);
    const int64_t end = i == hypothesis_length_ ? row_end : std::min(row_end, diagonal + width_);
    return {size_t(first), size_t(std::max(first, end))};
  }

  const Words& reference_;
  size_t hypothesis_length_;
  double ratio_;
  int64_t width_;
};

// What the shift search needs of the current hypothesis's optimal path: for each reference
// word the hypothesis position aligned with it (−1: before the first), and which words of
// either side are not matched.
struct Alignment {
  std::vector<int64_t> hypothesis_of_reference;
  std::vector<bool> hypothesis_error, reference_error;
};

Alignment align(const std::string& edits) {
  Alignment alignment;
  int64_t hypothesis = -1;
  for (const char edit : edits) {
    if (edit == kMatch || edit == kSubstitute) {
      ++hypothesis;
      alignment.hypothesis_of_reference.push_back(hypothesis);
      alignment.hypothesis_error.push_back(edit == kSubstitute);
      alignment.reference_error.push_back(edit == kSubstitute);
    } else if (edit == kDelete) {  // a hypothesis word without a reference word
      ++hypothesis;
      alignment.hypothesis_error.push_back(true);
    } else {  // kInsert: a reference word without a hypothesis word, after the last aligned one
      alignment.hypothesis_of_reference.push_back(hypothesis);
      alignment.reference_error.push_back(true);
    }
  }
  return alignment;
}

bool any_error(const std::vector<bool>& errors, size_t start, size_t length) {
  return std::any_of(errors.begin() + ptrdiff_t(start), errors.begin() + ptrdiff_t(start + length),
                     [](bool error) { return error; });
}

// `words` with the run [start, start + length) moved before position `target` (of the original
// words); a target inside the run moves it right by target − start words, at most to the end.
Words perform_shift(const Words& words, size_t start, size_t length, size_t target) {
  Words shifted;
  shifted.reserve(words.size());
  auto append = [&](size_t from, size_t to) {
    to = std::min(to, words.size());
    if (from < to) shifted.insert(shifted.end(), words.begin() + ptrdiff_t(from), words.begin() + ptrdiff_t(to));
  };
  if (target < start) {
    append(0, target);
    append(start, start + length);
    append(target, start);
    append(start + length, words.size());
  } else if (target > start + length) {
    append(0, start);
    append(start + length, target);
    append(start, start + length);
    append(target, words.size());
  } else {
    append(0, start);
    append(start + length, target + length);
    append(start, start + length);
    append(target + length, words.size());
  }
  return shifted;
}

// A shift and how much it lowers the edit distance.
struct Shift {
  int64_t gain;
  size_t length, start, target;
  Words shifted;

  // The better of two: larger gain, then longer run, then earlier run, then earlier target.
  bool better_than(const Shift& other) const {
    if (gain != other.gain) return gain > other.gain;
    if (length != other.length) return length > other.length;
    if (start != other.start) return start < other.start;
    return target < other.target;
  }
};

// One round of the shift search over `words`: the best candidate shift, if any; `candidates`
// counts the candidates evaluated so far, across rounds.
class ShiftSearch {
 public:
  ShiftSearch(const Words& words, const Words& reference, const BeamEditDistance& distance, int& candidates)
      : words_(words), reference_(reference), distance_(distance), candidates_(candidates),
        rows_(distance.rows(words)), score_(distance.distance(rows_)), alignment_(align(distance.trace(rows_))) {}

  int64_t score() const { return score_; }

  std::optional<Shift> best() {
    // Every run of 1..10 words that starts at start_h in the hypothesis and at start_r in the
    // reference, in this order.
    for (size_t start_h = 0; start_h < words_.size(); ++start_h) {
      for (size_t start_r = 0; start_r < reference_.size(); ++start_r) {
        if (std::abs(int64_t(start_r) - int64_t(start_h)) > kMaxShiftDistance) continue;
        for (size_t length = 1; length <= kMaxShiftSize && start_h + length <= words_.size() &&
                                start_r + length <= reference_.size() &&
                                words_[start_h + length - 1] == reference_[start_r + length - 1];
             ++length) {
          if (try_run(start_h, start_r, length) && candidates_ >= kMaxShiftCandidates) return best_;
        }
      }
    }
    return best_;
  }

 private:
  // Evaluates the targets of one matching run; false if the run is no candidate.
  bool try_run(size_t start_h, size_t start_r, size_t length) {
    // Only a run wrong on both sides, and not to be moved within itself.
    if (!any_error(alignment_.hypothesis_error, start_h, length)) return false;
    if (!any_error(alignment_.reference_error, start_r, length)) return false;
    const int64_t aligned = alignment_.hypothesis_of_reference[start_r];
    if (int64_t(start_h) <= aligned && aligned < int64_t(start_h + length)) return false;
    // Targets: after the hypothesis words aligned with the reference word before the run and
    // with each word of the run, each target once in a row.
    std::optional<size_t> previous_target;
    for (int64_t offset = -1; offset < int64_t(length); ++offset) {
      const int64_t r = int64_t(start_r) + offset;
      const size_t target = r == -1 ? 0 : size_t(alignment_.hypothesis_of_reference[size_t(r)] + 1);
      if (target == previous_target) continue;
      previous_target = target;
      evaluate(start_h, length, target);
    }
    return true;
  }

  void evaluate(size_t start, size_t length, size_t target) {
    Words shifted = perform_shift(words_, start, length, target);
    // The words before min(start, target) are unchanged, and so are their rows.
    const size_t prefix = std::min(start, target);
    const int64_t gain = score_ - distance_.distance_after(rows_[prefix], prefix, shifted);
    ++candidates_;
    Shift shift{gain, length, start, target, std::move(shifted)};
    if (!best_ || shift.better_than(*best_)) best_ = std::move(shift);
  }

  const Words& words_;
  const Words& reference_;
  const BeamEditDistance& distance_;
  int& candidates_;
  std::vector<Row> rows_;
  int64_t score_;
  Alignment alignment_;
  std::optional<Shift> best_;
};

int64_t ter_edits_of_ids(const Words& hypothesis, const Words& reference) {
  if (reference.empty()) return int64_t(hypothesis.size());  // every hypothesis word is deleted
  const BeamEditDistance distance(reference, hypothesis.size());
  Words words = hypothesis;
  int64_t shifts = 0;
  int candidates = 0;
  while (true) {
    ShiftSearch search(words, reference, distance, candidates);
    const std::optional<Shift> shift = search.best();
    // At the candidate limit the round's best shift is dropped, even a gainful one.
    if (candidates >= kMaxShiftCandidates || !shift || shift->gain <= 0) return shifts + search.score();
    ++shifts;
    words = shift->shifted;
  }
}

// The ids of `words`, numbering new words from ids.size() on.
Words word_ids(const std::vector<std::string>& words, std::unordered_map<std::string_view, int>& ids) {
  Words result;
  for (const std::string& word : words) result.push_back(ids.emplace(word, int(ids.size())).first->second);
  return result;
}

// A reference's words. sacreBLEU tokenizes references twice (once when it reads them, once when
// it splits them into words), and the second pass is no identity: `müller's.` gives `müller's`
// `.` and then `müller` `'s` `.`.
std::vector<std::string> ter_reference_words(std::string_view reference, const TerOptions& options) {
  std::string once;
  for (const std::string& word : ter_words(reference, options)) once.append(once.empty() ? "" : " ").append(word);
  return ter_words(once, options);
}

}  // namespace

int64_t ter_edits(const std::vector<std::string>& hypothesis, const std::vector<std::string>& reference) {
  std::unordered_map<std::string_view, int> ids;
  const Words hypothesis_ids = word_ids(hypothesis, ids);
  return ter_edits_of_ids(hypothesis_ids, word_ids(reference, ids));
}

TerStats ter_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                           const TerOptions& options) {
  if (references.empty()) throw DataError("TER: a hypothesis without references");
  const std::vector<std::string> hypothesis_words = ter_words(hypothesis, options);
  int64_t best_edits = 0, total_length = 0;
  for (size_t r = 0; r < references.size(); ++r) {
    const std::vector<std::string> reference_words = ter_reference_words(references[r], options);
    const int64_t edits = ter_edits(hypothesis_words, reference_words);
    best_edits = r == 0 ? edits : std::min(best_edits, edits);
    total_length += int64_t(reference_words.size());
  }
  return {best_edits, double(total_length) / double(references.size())};
}

std::vector<TerStats> ter_segments_stats(const std::vector<std::string>& hypotheses,
                                         const std::vector<std::vector<std::string>>& reference_streams,
                                         const TerOptions& options) {
  return each_segment_stats("TER", hypotheses, reference_streams,
                            [&](const std::string& hypothesis, const std::vector<std::string>& references) {
                              return ter_segment_stats(hypothesis, references, options);
                            });
}

double ter_compute(const TerStats& stats) {
  double rate = 0.0;  // no edits and no reference words
  if (stats.reference_length > 0) {
    rate = double(stats.edits) / stats.reference_length;
  } else if (stats.edits > 0) {
    rate = 1.0;  // words against empty references
  }
  return 100 * rate;
}

double ter_corpus_score(const std::vector<std::string>& hypotheses,
                        const std::vector<std::vector<std::string>>& reference_streams, const TerOptions& options) {
  TerStats total;
  // In segment order: the reference lengths are floats, their sum depends on it.
  for (const TerStats& segment : ter_segments_stats(hypotheses, reference_streams, options)) {
    total.edits += segment.edits;
    total.reference_length += segment.reference_length;
  }
  return ter_compute(total);
}

std::string ter_signature(const TerOptions& options, int num_references, bool short_form) {
  auto yes_no = [](bool value) { return value ? "yes" : "no"; };
  return fmt::format(fmt::runtime(short_form ? "#:{}|c:{}|t:tercom|nr:{}|pn:{}|as:{}|v:{}"
                                             : "nrefs:{}|case:{}|tok:tercom|norm:{}|punct:{}|asian:{}|version:{}"),
                     num_references, options.case_sensitive ? "mixed" : "lc", yes_no(options.normalized),
                     yes_no(!options.no_punct), yes_no(options.asian_support), kSacreBleuVersion);
}

std::string format_ter_score_only(double score, int width) { return fixed_decimals(score, width); }

std::string format_ter_score(double score, std::string_view signature, int width) {
  return fmt::format("TER{}{} = {}", signature.empty() ? "" : "|", signature, fixed_decimals(score, width));
}

std::string format_ter_json(double score, std::string_view signature, int width) {
  nlohmann::ordered_json json;
  json["name"] = "TER";
  json["score"] = printed_value(score, width);
  json["signature"] = signature;
  return sacrebleu_score_json(std::move(json), signature);
}

}  // namespace attn::data
