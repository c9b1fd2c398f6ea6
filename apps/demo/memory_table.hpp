// The demo report's table of what kNN-MT's memory contributed to one translation
// (nn/search/knn_explanation.hpp): per output token the model's probability, the neighbours'
// and the one the search used, beside the training pair whose decoder state was nearest.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "apps/report/report_page.hpp"
#include "data/dictionary.hpp"
#include "nn/search/knn_explanation.hpp"

namespace attn::app {

// `tokens` as text, BPE pieces joined into words, the piece at `position` in [brackets]
// ("Er [sag]t so .").
std::string marked_sentence(const data::Dictionary& dictionary, const std::vector<int64_t>& tokens, size_t position);

// Which pair and which token of it a datastore key belongs to, for a datastore built from
// pairs with these targets (KnnDatastore::build keeps their order).
struct KeyPlace {
  size_t pair = 0, position = 0;
};
KeyPlace key_place(const std::vector<std::vector<int64_t>>& datastore_targets, int64_t key);

// The table for `source` → `hypothesis` (token ids ending in </s>; the pair as text in the
// caption's note), the datastore built from the pairs with `datastore_targets`.
ReportTable knn_memory_table(nn::EncoderDecoderModel& model, const nn::KnnRetrieval& retrieval,
                             const data::Dictionary& target_dictionary,
                             const std::vector<std::vector<int64_t>>& datastore_targets,
                             const std::vector<int64_t>& source, const std::vector<int64_t>& hypothesis,
                             const std::string& pair_text);

}  // namespace attn::app
