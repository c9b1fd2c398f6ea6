// Several binarized files read as one corpus. See concatenated_corpus.hpp.
#include "data/concatenated_corpus.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "core/error.hpp"

namespace attn::data {

ConcatenatedCorpus::ConcatenatedCorpus(std::vector<BinarizedCorpus> parts, size_t primary_repeats)
    : parts_(std::move(parts)), primary_repeats_(primary_repeats) {
  ATTN_CHECK(!parts_.empty(), "a concatenated corpus needs at least one file");
  ATTN_CHECK(primary_repeats_ >= 1, "the primary corpus is repeated at least once, got {}", primary_repeats_);
  starts_ = {0, parts_.front().size() * primary_repeats_};
  for (size_t k = 1; k < parts_.size(); ++k) starts_.push_back(starts_.back() + parts_[k].size());
}

ConcatenatedCorpus::ConcatenatedCorpus(BinarizedCorpus single)
    : ConcatenatedCorpus([&] {
        std::vector<BinarizedCorpus> parts;
        parts.push_back(std::move(single));
        return parts;
      }()) {}

std::pair<const BinarizedCorpus*, size_t> ConcatenatedCorpus::locate(size_t i) const {
  ATTN_CHECK(i < size(), "{}: sentence {} of {}", description(), i, size());
  // The last start at or before i.
  const size_t k = size_t(std::upper_bound(starts_.begin(), starts_.end(), i) - starts_.begin()) - 1;
  const size_t within = i - starts_[k];
  return {&parts_[k], k == 0 ? within % parts_[0].size() : within};
}

size_t ConcatenatedCorpus::length(size_t i) const {
  const auto [part, within] = locate(i);
  return part->length(within);
}

void ConcatenatedCorpus::read_sentence(size_t i, std::span<int64_t> out) const {
  const auto [part, within] = locate(i);
  part->read_sentence(within, out);
}

std::vector<int64_t> ConcatenatedCorpus::sentence(size_t i) const {
  const auto [part, within] = locate(i);
  return part->sentence(within);
}

std::optional<std::string_view> ConcatenatedCorpus::original_text(size_t i) const {
  const auto [part, within] = locate(i);
  return part->original_text(within);
}

std::vector<std::vector<int64_t>> ConcatenatedCorpus::sentences() const {
  std::vector<std::vector<int64_t>> all(size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = sentence(i);
  return all;
}

std::string ConcatenatedCorpus::description() const {
  std::string text = parts_.front().path();
  if (primary_repeats_ > 1) text += fmt::format(" (×{})", primary_repeats_);
  for (size_t k = 1; k < parts_.size(); ++k) text += " + " + parts_[k].path();
  return text;
}

}  // namespace attn::data
