// The sentences of one or more binarized files read as one corpus: fairseq's combined
// training split, `train` followed by `train1`, `train2`, ... (a back-translated or other
// extra corpus binarized beside the original), with the first part, the primary, repeated
// --upsample-primary times (fairseq's ConcatDataset with sample ratio upsample_primary for the
// primary: sentence i of a repeat is the primary's sentence i mod its size).
//
// Sentence numbers run through the parts in order: with a primary of n sentences repeated r
// times, numbers 0 .. r·n-1 are the primary's, the next ones part 2's, and so on. One part
// and no repeat is the file itself, numbered as it is.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "data/binarized_corpus.hpp"

namespace attn::data {

class ConcatenatedCorpus {
 public:
  // `parts` must not be empty; primary_repeats >= 1.
  explicit ConcatenatedCorpus(std::vector<BinarizedCorpus> parts, size_t primary_repeats = 1);
  // One file.
  explicit ConcatenatedCorpus(BinarizedCorpus single);

  size_t size() const { return starts_.back(); }  // sentences, the primary's repeats included
  size_t length(size_t i) const;                  // tokens of sentence i, its </s> included
  void read_sentence(size_t i, std::span<int64_t> out) const;
  std::vector<int64_t> sentence(size_t i) const;
  std::vector<std::vector<int64_t>> sentences() const;
  // Sentence i's line of text where its part was read from text (BinarizedCorpus::original_text).
  std::optional<std::string_view> original_text(size_t i) const;

  const std::vector<BinarizedCorpus>& parts() const { return parts_; }
  size_t primary_repeats() const { return primary_repeats_; }
  // The first part's path: what a one-file corpus is named by.
  const std::string& path() const { return parts_.front().path(); }
  // For messages: the path of a one-file corpus, else "A + B + C" (and "(×r)" after a repeated primary).
  std::string description() const;

 private:
  // The part holding sentence i and the sentence's number within it.
  std::pair<const BinarizedCorpus*, size_t> locate(size_t i) const;

  std::vector<BinarizedCorpus> parts_;
  size_t primary_repeats_ = 1;
  std::vector<size_t> starts_;  // starts_[k]: the number of part k's first sentence; last: size()
};

}  // namespace attn::data
