#include "apps/generation/fairseq_lines.hpp"

#include <numbers>

#include <fmt/core.h>

#include "apps/generation/attention_alignment.hpp"
#include "data/dictionary.hpp"

namespace attn::app {
namespace {

std::string positional_scores(const nn::Hypothesis& hypothesis) {
  std::string line;
  for (double score : hypothesis.positional_scores)
    line += fmt::format("{}{:.4f}", line.empty() ? "" : " ", score / std::numbers::ln2);
  return line;
}

}  // namespace

std::string hypothesis_lines(size_t i, const nn::Hypothesis& h, const std::string& text,
                             const std::string& detokenized) {
  const double score = h.score / std::numbers::ln2;
  return fmt::format("H-{}\t{}\t{}\nD-{}\t{}\t{}\nP-{}\t{}\n", i, score, text, i, score, detokenized, i,
                     positional_scores(h));
}

std::string alignment_line(size_t i, const nn::Hypothesis& h, const std::vector<int64_t>& source,
                           const std::string& kind) {
  if (kind == "hard")
    return fmt::format("A-{}\t{}\n", i,
                       format_alignment(hard_alignment(h.attention, source, h.tokens, data::Dictionary::kPad,
                                                       data::Dictionary::kEos)));
  if (kind == "soft") return fmt::format("A-{}\t{}\n", i, format_soft_alignment(h.attention, source, h.tokens));
  return "";
}

}  // namespace attn::app
