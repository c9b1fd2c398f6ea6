// Tests of apps/generation/translator (the generation driver behind `attnlab generate` /
// `translate`; its batches are data::inference_batches, tested in tests/data/test_batching):
// results come back in input order and do not depend on the batching (padding is masked);
// beam 1 goes through greedy search and equals beam search with beam 1; a min_len that a
// sentence's max_len cannot reach is refused, as fairseq does.
#include <catch.hpp>

#include <cmath>

#include "apps/generation/translator.hpp"
#include "core/rng.hpp"
#include "nn/search/beam_search.hpp"

using namespace attn;
using namespace attn::app;

namespace {

std::shared_ptr<nn::EncoderDecoderModel> tiny_model(uint64_t seed = 3) {
  nn::TransformerConfig c = nn::transformer_preset("transformer_tiny");
  nn::apply_overrides(c, {"encoder_layers=1", "decoder_layers=1", "encoder_embed_dim=16", "decoder_embed_dim=16",
                          "encoder_ffn_embed_dim=32", "decoder_ffn_embed_dim=32", "encoder_attention_heads=2",
                          "decoder_attention_heads=2"});
  c.src_vocab_size = c.tgt_vocab_size = 24;
  manual_seed(seed);
  auto model = std::make_shared<nn::EncoderDecoderModel>(c);
  model->eval();
  return model;
}

std::vector<std::vector<int64_t>> sample_sources() {
  return {{4, 5, 6, 2}, {7, 2}, {8, 9, 10, 11, 12, 13, 2}, {14, 15, 2}, {16, 17, 18, 19, 2}, {20, 2}, {21, 22, 23, 4, 2}};
}

}  // namespace

TEST_CASE("translator: results are in input order and independent of batching", "[translator]") {
  auto model = tiny_model();
  const auto sources = sample_sources();
  DecodingOptions one_by_one, batched;
  one_by_one.search.beam = batched.search.beam = 3;
  one_by_one.search.max_len_b = batched.search.max_len_b = 6;
  one_by_one.max_sentences = 1;
  batched.max_sentences = 4;
  const auto alone = translate_sentences(*model, sources, one_by_one);
  size_t progress_calls = 0;
  const auto together = translate_sentences(*model, sources, batched, [&](size_t) { ++progress_calls; });
  CHECK(progress_calls == 2);
  REQUIRE(alone.size() == sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const Tensor src = from_vector<int64_t>(sources[i], {1, int64_t(sources[i].size())});
    const auto direct = nn::beam_search(*model, src, one_by_one.search);
    CHECK(alone[i].front().tokens == direct[0].front().tokens);
    CHECK(together[i].front().tokens == alone[i].front().tokens);
    CHECK(together[i].front().score == Approx(alone[i].front().score).margin(1e-5));
  }
}

TEST_CASE("translator: beam 1 (greedy) equals beam search with one hypothesis", "[translator]") {
  auto model = tiny_model();
  const auto sources = sample_sources();
  DecodingOptions greedy;
  greedy.search.beam = 1;
  greedy.search.max_len_b = 6;
  const auto results = translate_sentences(*model, sources, greedy);
  for (size_t i = 0; i < sources.size(); ++i) {
    const Tensor src = from_vector<int64_t>(sources[i], {1, int64_t(sources[i].size())});
    const auto beam_one = nn::beam_search(*model, src, greedy.search);
    REQUIRE(results[i].size() == 1);
    CHECK(results[i].front().tokens == beam_one[0].front().tokens);
    CHECK(results[i].front().tokens.back() == 2);
  }
}

TEST_CASE("translator: a min_len above a sentence's max_len is refused before any search, naming it",
          "[translator]") {
  auto model = tiny_model();
  DecodingOptions options;
  options.search.beam = 2;
  options.max_sentences = 1;  // each sentence its own batch: its own max_len
  options.search.max_len_a = 1;
  options.search.max_len_b = 0;
  options.search.min_len = 3;  // sentence 1 and 5 have 2 tokens, so max_len 2; the search cut them at 2
  CHECK_THROWS_WITH(translate_sentences(*model, sample_sources(), options),
                    Catch::Contains("--min-len 3 is larger than the longest output sentence 1 (0-based) may have, 2 "
                                    "tokens"));
  options.search.min_len = 2;
  for (const auto& nbest : translate_sentences(*model, sample_sources(), options))
    CHECK(nbest.front().tokens.size() >= 3);  // at least min_len tokens and </s>
}

TEST_CASE("score_references: each target token's log-probability as the full forward gives it, batched or not",
          "[translator]") {
  auto model = tiny_model();
  const auto sources = sample_sources();
  const std::vector<std::vector<int64_t>> targets = {{5, 6, 2}, {9, 2}, {7, 8, 9, 10, 2}, {2},
                                                     {11, 12, 13, 2}, {4, 4, 2}, {20, 21, 22, 23, 5, 6, 2}};
  DecodingOptions one_by_one, batched;
  one_by_one.max_sentences = 1;
  batched.max_sentences = 4;
  batched.search.return_attention = true;
  const auto alone = score_references(*model, sources, targets, one_by_one);
  const auto together = score_references(*model, sources, targets, batched);
  NoGradGuard no_grad;
  for (size_t i = 0; i < sources.size(); ++i) {
    INFO("sentence " << i);
    const std::vector<int64_t>& target = targets[i];
    std::vector<int64_t> previous = {2};
    previous.insert(previous.end(), target.begin(), target.end() - 1);
    const Tensor logits = model->forward(from_vector<int64_t>(sources[i], {1, int64_t(sources[i].size())}),
                                         from_vector<int64_t>(previous, {1, int64_t(previous.size())}));
    const Tensor log_probs = ops::log_softmax(logits, -1);
    REQUIRE(alone[i].tokens == target);
    REQUIRE(alone[i].positional_scores.size() == target.size());
    double total = 0.0;
    for (size_t t = 0; t < target.size(); ++t) {
      const double expected = log_probs.select(0, 0).select(0, int64_t(t)).select(0, target[t]).item();
      CHECK(alone[i].positional_scores[t] == Approx(expected).margin(1e-5));
      CHECK(together[i].positional_scores[t] == Approx(expected).margin(1e-5));
      total += expected;
    }
    CHECK(alone[i].score == Approx(total / double(target.size())).margin(1e-5));
    CHECK_FALSE(alone[i].attention.defined());
    REQUIRE(together[i].attention.dim() == 2);
    CHECK(together[i].attention.size(0) == int64_t(target.size()));
  }
  CHECK_THROWS_WITH(score_references(*model, sources, {{2}}, one_by_one), Catch::Contains("targets"));

  // An ensemble scores each token by the mean of its models' probabilities.
  auto other = tiny_model(4);
  const auto by_other = score_references(*other, sources, targets, batched);
  const auto by_both = score_references(nn::ModelEnsemble({model.get(), other.get()}), sources, targets, batched);
  for (size_t i = 0; i < sources.size(); ++i)
    for (size_t t = 0; t < targets[i].size(); ++t) {
      const double mean = (std::exp(alone[i].positional_scores[t]) + std::exp(by_other[i].positional_scores[t])) / 2;
      CHECK(by_both[i].positional_scores[t] == Approx(std::log(mean)).margin(1e-5));
    }
}
