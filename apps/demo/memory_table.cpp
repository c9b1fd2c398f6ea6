#include "apps/demo/memory_table.hpp"

#include <fmt/core.h>

namespace attn::app {

std::string marked_sentence(const data::Dictionary& dictionary, const std::vector<int64_t>& tokens, size_t position) {
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string piece = dictionary.symbol(int32_t(tokens[i]));
    const bool continued = piece.ends_with("@@");  // the word goes on in the next piece
    if (continued) piece.resize(piece.size() - 2);
    text += i == position ? "[" + piece + "]" : piece;
    if (!continued && i + 1 < tokens.size()) text += ' ';
  }
  return text;
}

KeyPlace key_place(const std::vector<std::vector<int64_t>>& datastore_targets, int64_t key) {
  ATTN_CHECK(key >= 0, "key_place: key {} is negative", key);
  size_t remaining = size_t(key);
  for (size_t pair = 0; pair < datastore_targets.size(); ++pair) {
    if (remaining < datastore_targets[pair].size()) return {pair, remaining};
    remaining -= datastore_targets[pair].size();
  }
  throw Error(fmt::format("key_place: key {} is beyond the datastore's pairs", key));
}

ReportTable knn_memory_table(nn::EncoderDecoderModel& model, const nn::KnnRetrieval& retrieval,
                             const data::Dictionary& target_dictionary,
                             const std::vector<std::vector<int64_t>>& datastore_targets,
                             const std::vector<int64_t>& source, const std::vector<int64_t>& hypothesis,
                             const std::string& pair_text) {
  ReportTable table{
      .caption = "What the memory contributed (kNN-MT)",
      .header = {"output token", "p model", fmt::format("p memory ({} nearest)", retrieval.k),
                 fmt::format("p used (λ {})", retrieval.lambda), "nearest training pair, its token in [ ]"},
      .rows = {},
      .note = fmt::format(
          "{}, forced through the averaged model token by token (BPE pieces). For each token: the "
          "probability the model gives it, the probability the {} training states nearest to the "
          "model's state give it (their tokens' votes weighted by exp(−distance / {:.4g})), and the "
          "mixture the beam search used. Where the memory is sure and the model is not, the "
          "memory can tip the search towards the word.",
          pair_text, retrieval.k, retrieval.temperature)};
  for (const nn::KnnTokenExplanation& row : nn::explain_knn(model, retrieval, source, hypothesis)) {
    const KeyPlace nearest = key_place(datastore_targets, row.neighbours.front().key);
    table.rows.push_back({target_dictionary.symbol(int32_t(row.token)), fmt::format("{:.3f}", row.model_probability),
                          fmt::format("{:.3f}", row.knn_probability), fmt::format("{:.3f}", row.probability),
                          fmt::format("#{}: {}", nearest.pair + 1,
                                      marked_sentence(target_dictionary, datastore_targets[nearest.pair],
                                                      nearest.position))});
  }
  return table;
}

}  // namespace attn::app
