#include "apps/cli/search_options.hpp"

#include <algorithm>

#include "apps/cli/command.hpp"
#include "core/error.hpp"

namespace attn::app {
namespace {

// 0 or an integer >= 2: a 1-gram block would forbid </s>, which opens every hypothesis.
CLI::Validator ngram_size() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int64_t value = 0;
        if (CLI::detail::lexical_cast(text, value) && (value == 0 || value >= 2)) return {};
        return "must be 0 (off) or an integer >= 2, got '" + text + "'";
      },
      "0|N>=2");
}

}  // namespace

void add_search_options(CLI::App& cmd, nn::SearchOptions& search, SamplingFlags& sampling) {
  cmd.add_option("--beam", search.beam, "Beam size (1: greedy)")->check(positive_number())->capture_default_str();
  cmd.add_option("--lenpen", search.lenpen, "Length penalty exponent")
      ->check(number_in_range(-nn::kMaxLengthPenalty, nn::kMaxLengthPenalty))
      ->capture_default_str();
  cmd.add_option("--max-len-a", search.max_len_a, "max_len = a * src_len + b")
      ->check(number_in_range(0, nn::kMaxLengthRatio))
      ->capture_default_str();
  cmd.add_option("--max-len-b", search.max_len_b, "max_len = a * src_len + b")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--no-repeat-ngram-size", search.no_repeat_ngram_size,
                 "Never repeat an n-gram of this size in a hypothesis (0: off; at least 2)")
      ->check(ngram_size())
      ->capture_default_str();
  cmd.add_option("--unkpen", search.unk_penalty,
                 "Unknown-word penalty, subtracted from <unk>'s log-probability (> 0: fewer <unk>, < 0: more)")
      ->check(number_in_range(-nn::kMaxUnknownPenalty, nn::kMaxUnknownPenalty))
      ->capture_default_str();
  cmd.add_option("--temperature", search.temperature, "Divide the logits by T before the softmax (< 1 sharper)")
      ->check(number_in_range(nn::kMinTemperature, nn::kMaxTemperature))
      ->capture_default_str();
  cmd.add_flag("--sampling", sampling.sampling, "Draw each next token from the model's distribution instead of searching");
  // fairseq reads 0 and any negative value as off; only -1 is taken here, so that a typo is not
  // silently sampling from every token.
  cmd.add_option("--sampling-topk", sampling.topk, "With --sampling: draw among the K most probable tokens (-1: all)")
      ->check(finite_number_that([](double k) { return k >= 1 || k == -1; }, " >= 1 (or -1: all)", "K|-1"))
      ->capture_default_str();
  cmd.add_option("--sampling-topp", sampling.topp,
                 "With --sampling: draw among the most probable tokens whose probability reaches P (-1: off)")
      ->check(finite_number_that([](double p) { return (p > 0 && p <= 1) || p == -1; }, " in (0, 1] (or -1: off)",
                                 "P|-1"))
      ->capture_default_str();
  cmd.add_option("--seed", sampling.seed, "With --sampling: the random numbers' seed")->capture_default_str();
  // fairseq's default -1 (and 0) is off.
  cmd.add_option_function<int64_t>(
         "--diverse-beam-groups", [&search](int64_t groups) { search.diverse_beam_groups = std::max<int64_t>(groups, 0); },
         "Diverse beam search: this many groups of hypotheses, the beam a multiple of it (-1: off)")
      ->check(finite_number_that([](double g) { return g >= -1; }, " >= -1", "G|-1"));
  cmd.add_option("--diverse-beam-strength", search.diverse_beam_strength,
                 "Diverse beam search: how much a token earlier groups chose is penalised")
      ->check(number_in_range(-nn::kMaxUnknownPenalty, nn::kMaxUnknownPenalty))
      ->capture_default_str();
  cmd.add_option("--diversity-rate", search.diversity_rate,
                 "Diverse siblings search: each hypothesis's k-th best continuation lowered by k times this (-1: off)")
      ->check(finite_number_that([](double r) { return r >= -1 && r <= nn::kMaxUnknownPenalty; }, " in [-1, 1000]",
                                 "R|-1"))
      ->capture_default_str();
  cmd.add_flag("--unnormalized", sampling.unnormalized,
               "Compare and print hypotheses by the sum of their log-probabilities, not divided by their length "
               "(fairseq's flag; --lenpen is then ignored)");
  cmd.add_flag("--match-source-len", search.match_source_len,
               "Each output ends after as many tokens as its source has (</s> included), as fairseq's flag");
}

void apply_sampling_flags(const SamplingFlags& flags, nn::SearchOptions& search) {
  if (flags.unnormalized) search.lenpen = 0.0;  // S / L^0 = S
  const bool topk = flags.topk > 0, topp = flags.topp > 0.0;
  ATTN_CHECK(flags.sampling || (!topk && !topp), "--sampling-topk and --sampling-topp need --sampling");
  ATTN_CHECK(!(topk && topp), "give --sampling-topk or --sampling-topp, not both");
  if (flags.sampling) {
    nn::SamplingOptions& sampling = search.sampling.emplace();
    sampling.topk = topk ? flags.topk : 0;
    sampling.topp = topp ? flags.topp : 0.0;
    sampling.generator = std::make_shared<Generator>(flags.seed);
  }
  ATTN_CHECK(search.exclusive_strategies() <= 1,
             "--sampling, --diverse-beam-groups, --match-source-len and --diversity-rate exclude one another (as in "
             "fairseq)");
  ATTN_CHECK(search.diverse_beam_groups == 0 || search.beam % search.diverse_beam_groups == 0,
             "--diverse-beam-groups {}: the beam ({}) must be a multiple of the groups", search.diverse_beam_groups,
             search.beam);
}

}  // namespace attn::app
