// End to end on a synthetic task: a tiny Transformer trained with the label-smoothed
// criterion, Adam and the inverse-sqrt schedule learns to reverse random token sequences
// and then decodes held-out sequences exactly with greedy search (≥ 99% exact match).
// Sources are left-padded, targets right-padded, prev_output_tokens = </s> y_1 … y_{n−1}
// (docs/models.md §1.1), so padding, masking, the loss and decoding are all exercised.
#include <catch.hpp>

#include <algorithm>

#include "nn/adam.hpp"
#include "nn/criterion.hpp"
#include "nn/lr_scheduler.hpp"
#include "nn/search/greedy_search.hpp"
#include "tiny_transformer.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

constexpr int64_t kVocab = 12;  // 4 specials + 8 symbols

struct Batch {
  Tensor src, prev, target;
  std::vector<std::vector<int64_t>> expected;  // reversed sequences with </s>
};

Batch reverse_batch(int64_t size, uint64_t seed) {
  Generator gen(seed);
  std::vector<double> lengths = uniform({size}, 2, 7, DType::Float64, &gen).to_vector();
  std::vector<int64_t> lens;
  for (double l : lengths) lens.push_back(int64_t(l));
  Batch b;
  std::vector<std::vector<int64_t>> sources = random_sentences(lens, kVocab, seed + 1), prevs;
  for (const auto& s : sources) {
    std::vector<int64_t> reversed(s.rbegin() + 1, s.rend());  // tokens without </s>, reversed
    reversed.push_back(kEos);
    std::vector<int64_t> prev = {kEos};
    prev.insert(prev.end(), reversed.begin(), reversed.end() - 1);
    b.expected.push_back(reversed);
    prevs.push_back(prev);
  }
  b.src = pad_batch(sources, true);
  b.prev = pad_batch(prevs, false);
  b.target = pad_batch(b.expected, false);
  return b;
}

}  // namespace

TEST_CASE("a tiny Transformer learns to reverse sequences (greedy exact match >= 99%)") {
  nn::TransformerConfig c = tiny_config(kVocab, 2);
  c.encoder_embed_dim = c.decoder_embed_dim = 32;
  c.encoder_ffn_embed_dim = c.decoder_ffn_embed_dim = 64;
  c.dropout = 0.0;
  c.share_all_embeddings = true;
  manual_seed(1);
  nn::EncoderDecoderModel model(c);
  nn::Adam adam(model.named_parameters(), {0.9, 0.98, 1e-8, 0.0});
  nn::InverseSqrtScheduler schedule({3e-3, 50, 1e-5});
  nn::LabelSmoothedCrossEntropy criterion(0.1, kPad);

  model.train();
  adam.set_lr(schedule.step_update(0));
  double last_nll = 0;
  for (int64_t update = 1; update <= 400; ++update) {
    Batch b = reverse_batch(64, 1000 + 2 * uint64_t(update));
    adam.zero_grad();
    nn::CriterionOutput out = criterion(model.forward(b.src, b.prev), b.target);
    backward(out.loss / double(out.ntokens));
    adam.step();
    adam.set_lr(schedule.step_update(update));
    last_nll = out.nll_sum / double(out.ntokens);
  }
  // With ε = 0.1 over V = 12 the best achievable NLL is −ln(1 − ε + ε/V) ≈ 0.0961.
  INFO("final training NLL per token: " << last_nll);
  CHECK(last_nll < 0.12);

  model.eval();
  Batch test = reverse_batch(200, 7);
  nn::SearchOptions o;
  o.max_len_b = 10;
  std::vector<nn::Hypothesis> hyps = nn::greedy_search(model, test.src, o);
  int64_t exact = 0;
  for (size_t i = 0; i < hyps.size(); ++i) exact += hyps[i].tokens == test.expected[i];
  INFO("exact matches: " << exact << " / " << hyps.size());
  CHECK(double(exact) >= 0.99 * double(hyps.size()));
}
