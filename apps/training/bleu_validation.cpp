// See bleu_validation.hpp.
#include "apps/training/bleu_validation.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "apps/generation/translator.hpp"
#include "core/error.hpp"
#include "data/moses_detokenizer.hpp"

namespace attn::app {
namespace {

// Every occurrence of "<unk>" in `text` replaced by `marker`.
std::string escape_unknown(std::string text, const std::string& marker) {
  static const std::string unk = "<unk>";
  for (size_t at = text.find(unk); at != std::string::npos; at = text.find(unk, at + marker.size()))
    text.replace(at, unk.size(), marker);
  return text;
}

// The sentences of this rank: i with i mod ranks = rank.
template <typename T>
std::vector<T> shard(const std::vector<T>& all, int rank, int ranks) {
  std::vector<T> mine;
  for (size_t i = size_t(rank); i < all.size(); i += size_t(ranks)) mine.push_back(all[i]);
  return mine;
}

}  // namespace

nn::SearchOptions parse_eval_bleu_args(const std::string& json, nn::SearchOptions search) {
  const nlohmann::json args = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  ATTN_CHECK(args.is_object(), "--eval-bleu-args must be a JSON object such as '{{\"beam\": 4}}', got: {}", json);
  for (const auto& [key, value] : args.items()) {
    const auto integer = [&, key = key, value = value](int64_t least) {
      ATTN_CHECK(value.is_number_integer() && value.get<int64_t>() >= least,
                 "--eval-bleu-args: \"{}\" must be an integer >= {}, got {}", key, least, value.dump());
      return value.get<int64_t>();
    };
    const auto number = [&, key = key, value = value](double least, double most) {
      ATTN_CHECK(value.is_number() && value.get<double>() >= least && value.get<double>() <= most,
                 "--eval-bleu-args: \"{}\" must be a number in [{}, {}], got {}", key, least, most, value.dump());
      return value.get<double>();
    };
    if (key == "beam") search.beam = integer(1);
    else if (key == "lenpen") search.lenpen = number(-nn::kMaxLengthPenalty, nn::kMaxLengthPenalty);
    else if (key == "max_len_a") search.max_len_a = number(0, nn::kMaxLengthRatio);
    else if (key == "max_len_b") search.max_len_b = integer(0);
    else if (key == "min_len") search.min_len = integer(1);
    else if (key == "no_repeat_ngram_size") search.no_repeat_ngram_size = integer(0);
    else if (key == "unkpen") search.unk_penalty = number(-nn::kMaxUnknownPenalty, nn::kMaxUnknownPenalty);
    else
      throw Error(fmt::format("--eval-bleu-args: unknown key \"{}\" (known: beam, lenpen, max_len_a, max_len_b, "
                              "min_len, no_repeat_ngram_size, unkpen)", key));
  }
  ATTN_CHECK(search.no_repeat_ngram_size != 1, "--eval-bleu-args: no_repeat_ngram_size must be 0 (off) or at least 2");
  ATTN_CHECK(!nn::min_len_beyond_every_max_len(search),
             "--eval-bleu-args: min_len ({}) is larger than max_len_b ({}), the longest output with max_len_a 0",
             search.min_len, search.max_len_b);
  return search;
}

std::string parse_eval_bleu_detok_args(const std::string& json) {
  const nlohmann::json args = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  ATTN_CHECK(args.is_object(),
             "--eval-bleu-detok-args must be a JSON object such as '{{\"target_lang\": \"de\"}}', got: {}", json);
  std::string language;
  for (const auto& [key, value] : args.items()) {
    if (key == "target_lang" || key == "source_lang") {
      ATTN_CHECK(value.is_string(), "--eval-bleu-detok-args: \"{}\" must be a language code, got {}", key,
                 value.dump());
      if (key == "target_lang") language = value.get<std::string>();
    } else if (key == "moses_no_dash_splits" || key == "moses_no_escape") {
      ATTN_CHECK(value.is_boolean(), "--eval-bleu-detok-args: \"{}\" must be true or false, got {}", key, value.dump());
    } else {
      throw Error(
          fmt::format("--eval-bleu-detok-args: unknown key \"{}\" (known: target_lang, source_lang, "
                      "moses_no_dash_splits, moses_no_escape)",
                      key));
    }
  }
  return language;
}

BleuValidation evaluate_bleu(nn::EncoderDecoderModel& model, const SplitCorpora& corpora,
                             const data::Dictionary& target_dict, const BleuValidationOptions& options,
                             const std::string& target_lang, int64_t max_tokens, int64_t max_sentences,
                             dist::Communicator* world) {
  const int rank = world ? world->rank() : 0, ranks = world ? world->size() : 1;
  // Sources longer than the model's positions are left out, as the loss's validation leaves them.
  std::vector<std::vector<int64_t>> all_sources, all_targets;
  const std::vector<std::vector<int64_t>> split_sources = corpora.source.sentences();
  const std::vector<std::vector<int64_t>> split_targets = corpora.target.sentences();
  for (size_t i = 0; i < split_sources.size(); ++i) {
    if (int64_t(split_sources[i].size()) > model.config().max_source_positions) continue;
    all_sources.push_back(split_sources[i]);
    all_targets.push_back(split_targets[i]);
  }
  const std::vector<std::vector<int64_t>> sources = shard(all_sources, rank, ranks);
  const std::vector<std::vector<int64_t>> targets = shard(all_targets, rank, ranks);
  model.eval();
  const std::vector<std::vector<nn::Hypothesis>> hypotheses =
      translate_sentences(model, sources, {.search = options.search, .max_tokens = max_tokens,
                                           .max_sentences = max_sentences});
  const data::MosesDetokenizer detokenizer(
      data::parse_moses_language(options.detok_language.empty() ? target_lang : options.detok_language));
  const auto text = [&](std::span<const int64_t> ids, const std::string& unknown_marker) {
    std::string line = escape_unknown(target_dict.decode(ids, options.remove_bpe), unknown_marker);
    return options.detok == "moses" ? detokenizer.detokenize(line) : line;
  };
  data::SacreBleuOptions sacre;
  if (options.tokenized_bleu) sacre.tokenizer = data::BleuTokenizer::kNone;
  BleuValidation result;
  data::BleuStats stats(sacre.max_order);
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string hypothesis = text(hypotheses[i].front().tokens, "UNKNOWNTOKENINHYP");
    const std::string reference = text(targets[i], "UNKNOWNTOKENINREF");
    stats += data::sacrebleu_segment_stats(hypothesis, {reference}, sacre);
    if (i == 0 && rank == 0) {
      result.sample_hypothesis = hypothesis;
      result.sample_reference = reference;
    }
  }
  if (ranks > 1) {  // the statistics are counts: exact in float64
    std::vector<double> sums = {double(stats.sys_len), double(stats.ref_len)};
    for (int n = 0; n < sacre.max_order; ++n) {
      sums.push_back(double(stats.correct[size_t(n)]));
      sums.push_back(double(stats.total[size_t(n)]));
    }
    world->all_reduce_sum(sums.data(), sums.size());
    stats.sys_len = int64_t(sums[0]);
    stats.ref_len = int64_t(sums[1]);
    for (size_t n = 0; n < size_t(sacre.max_order); ++n) {
      stats.correct[n] = int64_t(sums[2 + 2 * n]);
      stats.total[n] = int64_t(sums[3 + 2 * n]);
    }
  }
  result.score = data::sacrebleu_compute(stats, sacre);
  result.signature = data::sacrebleu_signature(sacre, 1);
  return result;
}

}  // namespace attn::app
