// Greedy and beam search (nn/search/, docs/models.md §1.10): batched beam search on the
// incremental state against a plain per-sentence reference that rescores every prefix with
// the full parallel forward (with and without n-gram blocking); beam 1 == greedy; batching
// invariance; length limits, pad never chosen, score normalisation, n-best order,
// attention; ensembles against the same reference over the mean of their probabilities;
// sampling (top-k 1 = greedy, greedy = beam 1, the model's scores, seeded) and temperature;
// fairseq's other strategies (prefix tokens, match_source_len, diverse beam search, lexical
// constraints; that they find fairseq's own hypotheses is tests/apps/test_cli.cpp's); option errors.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "nn/search/beam_search.hpp"
#include "nn/search/greedy_search.hpp"
#include "nn/search/search_common.hpp"
#include "tiny_transformer.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// A random tiny model with sharpened output distributions (so </s> competes early).
std::unique_ptr<nn::EncoderDecoderModel> peaky_model(uint64_t seed, int64_t vocab = 10) {
  manual_seed(seed);
  auto model = std::make_unique<nn::EncoderDecoderModel>(tiny_config(vocab));
  model->eval();
  NoGradGuard no_grad;
  Tensor w = model->decoder->output_projection.data_only();
  w.copy_(ops::mul(w, 6.0));
  return model;
}

// fairseq's other strategies are tested on a peaky 12-symbol model and random sources of
// `lengths`, both drawn from `seed`, searched with `beam` hypotheses all returned and outputs of
// at most `max_len_b` tokens.
struct StrategyCase {
  std::unique_ptr<nn::EncoderDecoderModel> model;
  Tensor src;
  nn::SearchOptions options;
};

StrategyCase strategy_case(uint64_t seed, const std::vector<int64_t>& lengths, int64_t beam, int64_t max_len_b) {
  StrategyCase c{peaky_model(seed, 12), pad_batch(random_sentences(lengths, 12, seed), true), {}};
  c.options.beam = beam;
  c.options.nbest = beam;
  c.options.max_len_b = max_len_b;
  return c;
}

struct RefHyp {
  std::vector<int64_t> tokens;
  std::vector<float> cumulative;
};

using Models = std::vector<nn::EncoderDecoderModel*>;

// Next-token log-probabilities after `prefix` (without the leading </s>) by the full forward;
// of several models, log of the mean of their probabilities, in double.
std::vector<float> full_forward_log_probs(const Models& models, const Tensor& src,
                                          const std::vector<int64_t>& prefix) {
  std::vector<int64_t> prev = {kEos};
  prev.insert(prev.end(), prefix.begin(), prefix.end());
  std::vector<double> mean_probs;
  for (nn::EncoderDecoderModel* model : models) {
    Tensor logits = model->forward(src, from_vector(prev, {1, int64_t(prev.size())}));
    std::vector<double> lp = ops::log_softmax(logits.select(1, int64_t(prev.size()) - 1), -1).to_vector();
    if (models.size() == 1) return std::vector<float>(lp.begin(), lp.end());
    mean_probs.resize(lp.size(), 0.0);
    for (size_t v = 0; v < lp.size(); ++v) mean_probs[v] += std::exp(lp[v]) / double(models.size());
  }
  std::vector<float> out;
  for (double p : mean_probs) out.push_back(float(std::log(p)));
  return out;
}

// Every n-gram of </s> + tokens (none when n is 0).
std::set<std::vector<int64_t>> ngrams_with_opening_eos(const std::vector<int64_t>& tokens, int64_t n) {
  std::vector<int64_t> sequence = {kEos};
  sequence.insert(sequence.end(), tokens.begin(), tokens.end());
  std::set<std::vector<int64_t>> out;
  for (size_t i = 0; n > 0 && i + size_t(n) <= sequence.size(); ++i)
    out.insert(std::vector<int64_t>(sequence.begin() + i, sequence.begin() + i + n));
  return out;
}

// The n-gram that extending `tokens` with `next` would end with (empty when too short).
std::vector<int64_t> last_ngram_with(std::vector<int64_t> tokens, int64_t next, int64_t n) {
  tokens.insert(tokens.begin(), kEos);
  tokens.push_back(next);
  if (n == 0 || int64_t(tokens.size()) < n) return {};
  return std::vector<int64_t>(tokens.end() - n, tokens.end());
}

// Whether a finished hypothesis holds some n-gram twice: fewer distinct n-grams than
// positions for one in </s> + tokens (without the final </s>).
bool repeats_an_ngram(const std::vector<int64_t>& tokens, int64_t n) {
  const std::vector<int64_t> body(tokens.begin(), tokens.end() - 1);
  return int64_t(ngrams_with_opening_eos(body, n).size()) < int64_t(body.size()) + 2 - n;
}

// fairseq's beam search (§1.10) for one sentence, written plainly: no incremental state,
// no batching, no reordering.
std::vector<nn::Hypothesis> reference_beam(const Models& models, const Tensor& src, const nn::SearchOptions& o,
                                           int64_t max_len) {
  const int64_t V = models.front()->config().tgt_vocab_size, K = o.beam;
  std::vector<RefHyp> beams(1);
  std::vector<bool> ignore(K, false);
  std::vector<nn::Hypothesis> done;
  for (int64_t step = 0; step <= max_len; ++step) {
    struct Cand { float score; int64_t flat; };
    std::vector<Cand> cands;
    for (size_t b = 0; b < beams.size(); ++b) {
      std::vector<float> lp = full_forward_log_probs(models, src, beams[b].tokens);
      lp[kPad] = kMinusInfinity;
      lp[kUnk] -= float(o.unk_penalty);
      const std::set<std::vector<int64_t>> seen = ngrams_with_opening_eos(beams[b].tokens, o.no_repeat_ngram_size);
      for (int64_t v = 0; v < V; ++v) {
        if (step >= max_len && v != kEos) lp[v] = kMinusInfinity;
        if (step < o.min_len && v == kEos) lp[v] = kMinusInfinity;
        if (seen.count(last_ngram_with(beams[b].tokens, v, o.no_repeat_ngram_size))) lp[v] = kMinusInfinity;
        const float prev = beams[b].cumulative.empty() ? 0.0f : beams[b].cumulative.back();
        cands.push_back({step == 0 ? lp[v] : prev + lp[v], int64_t(b) * V + v});
      }
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.score > b.score; });
    cands.resize(std::min<int64_t>(2 * K, int64_t(cands.size()) - 1));
    std::vector<bool> is_eos(cands.size());
    for (size_t c = 0; c < cands.size(); ++c) is_eos[c] = cands[c].flat % V == kEos && cands[c].score != kMinusInfinity;
    for (int64_t c = 0; c < K; ++c) {
      if (ignore[c]) is_eos[c] = false;
      if (!is_eos[c] || int64_t(done.size()) >= K) continue;
      RefHyp h = beams[cands[c].flat / V];
      h.tokens.push_back(kEos);
      h.cumulative.push_back(cands[c].score);
      nn::Hypothesis out;
      out.tokens = h.tokens;
      out.score = double(cands[c].score) / std::pow(double(h.tokens.size()), o.lenpen);
      done.push_back(out);
    }
    if (int64_t(done.size()) >= K || step >= max_len) break;
    std::vector<RefHyp> next;
    std::vector<bool> next_ignore;
    for (bool excluded : {false, true})
      for (size_t c = 0; c < cands.size() && int64_t(next.size()) < K; ++c)
        if ((is_eos[c] || (int64_t(c) < K && ignore[c])) == excluded) {
          RefHyp h = beams[cands[c].flat / V];
          h.tokens.push_back(cands[c].flat % V);
          h.cumulative.push_back(cands[c].score);
          next.push_back(h);
          next_ignore.push_back(excluded);
        }
    beams = next;
    ignore = next_ignore;
  }
  std::stable_sort(done.begin(), done.end(), [](auto& a, auto& b) { return a.score > b.score; });
  return done;
}

void check_same(const nn::Hypothesis& a, const nn::Hypothesis& b, double tol = 1e-4) {
  CHECK(a.tokens == b.tokens);
  CHECK(std::abs(a.score - b.score) <= tol);
}

// Greedy search under `o` (beam and nbest set to 1) equals beam search with beam 1, exactly.
void check_greedy_equals_beam1(nn::EncoderDecoderModel& model, const Tensor& src, nn::SearchOptions o) {
  o.nbest = o.beam = 1;
  const std::vector<nn::Hypothesis> greedy = nn::greedy_search(model, src, o);
  const std::vector<std::vector<nn::Hypothesis>> beam1 = nn::beam_search(model, src, o);
  for (size_t i = 0; i < greedy.size(); ++i) check_same(greedy[i], beam1[i][0], 0.0);
}

// Beam search of `models` (one, or an ensemble) against reference_beam, sentence by sentence;
// returns what the search gave.
std::vector<std::vector<nn::Hypothesis>> check_against_reference(const Models& models, const Tensor& src,
                                                                 const nn::SearchOptions& o) {
  const int64_t max_len = int64_t(o.max_len_a * double(src.size(1))) + o.max_len_b;
  std::vector<std::vector<nn::Hypothesis>> got = nn::beam_search(nn::ModelEnsemble(models), src, o);
  REQUIRE(int64_t(got.size()) == src.size(0));
  for (int64_t i = 0; i < src.size(0); ++i) {
    INFO("sentence " << i);
    const std::vector<nn::Hypothesis> expected = reference_beam(models, src.narrow(0, i, 1), o, max_len);
    REQUIRE(got[size_t(i)].size() == expected.size());
    for (size_t h = 0; h < expected.size(); ++h) check_same(got[size_t(i)][h], expected[h]);
  }
  return got;
}

}  // namespace

TEST_CASE("beam search equals the plain full-forward reference (beam 1, 3, 5; lenpen; min_len)") {
  auto model = peaky_model(21);
  NoGradGuard no_grad;
  std::vector<std::vector<int64_t>> sentences = random_sentences({4, 2, 6, 3}, 10, 30);
  Tensor src = pad_batch(sentences, true);
  for (auto [beam, lenpen, min_len] : {std::tuple{1, 1.0, 1}, {3, 0.6, 1}, {5, 1.0, 3}, {4, 2.0, 1}}) {
    nn::SearchOptions o;
    o.beam = beam;
    o.nbest = beam;
    o.lenpen = lenpen;
    o.min_len = min_len;
    o.max_len_a = 1.0;
    o.max_len_b = 2;
    INFO("beam " << beam);
    check_against_reference({model.get()}, src, o);
  }
}

TEST_CASE("repeated_ngram_endings bans what would repeat an n-gram, the opening </s> included") {
  using nn::search_detail::repeated_ngram_endings;
  const std::vector<int64_t> sequence = {kEos, 5, 6, 7, 5};
  CHECK(repeated_ngram_endings(sequence, 2) == std::vector<int64_t>{6});  // "5 6" seen
  CHECK(repeated_ngram_endings(sequence, 3).empty());                     // "7 5" not seen before
  CHECK(repeated_ngram_endings({kEos, 5, 6, 5, 6}, 3) == std::vector<int64_t>{5});
  CHECK(repeated_ngram_endings({kEos, 4, 4, 4}, 2) == std::vector<int64_t>{4, 4});
  CHECK(repeated_ngram_endings({kEos, 4}, 4).empty());  // shorter than n − 1: nothing yet
  CHECK(repeated_ngram_endings({kEos, 4, 4}, 3).empty());  // "</s> 4 4" is not "4 4 x"
  CHECK(repeated_ngram_endings({kEos, 4, 4, 4}, 3) == std::vector<int64_t>{4});
}

TEST_CASE("n-gram blocking: beam search equals the reference, and no hypothesis repeats an n-gram") {
  auto model = peaky_model(27);
  NoGradGuard no_grad;
  std::vector<std::vector<int64_t>> sentences = random_sentences({4, 6, 3}, 10, 36);
  Tensor src = pad_batch(sentences, true);
  nn::SearchOptions o;
  o.max_len_a = 2.0;
  o.max_len_b = 4;
  o.nbest = o.beam = 3;
  // The model repeats bigrams when left alone, so the blocking has something to change.
  int64_t repeating = 0;
  for (const auto& hyps : nn::beam_search(*model, src, o))
    for (const nn::Hypothesis& h : hyps) repeating += repeats_an_ngram(h.tokens, 2);
  REQUIRE(repeating > 0);
  for (int64_t n : {2, 3}) {
    o.no_repeat_ngram_size = n;
    INFO("n " << n);
    for (const std::vector<nn::Hypothesis>& hyps : check_against_reference({model.get()}, src, o))
      for (const nn::Hypothesis& h : hyps) CHECK_FALSE(repeats_an_ngram(h.tokens, n));
    check_greedy_equals_beam1(*model, src, o);
  }
  o.no_repeat_ngram_size = 1;  // would forbid </s>: refused
  CHECK_THROWS_WITH(nn::beam_search(*model, src, o), Catch::Contains("no_repeat_ngram_size"));
}

TEST_CASE("unk penalty: <unk>'s log-probability lowered at every step (fairseq's --unkpen), as the reference") {
  auto model = peaky_model(23);
  NoGradGuard no_grad;
  std::vector<std::vector<int64_t>> sentences = random_sentences({4, 6, 3}, 10, 37);
  Tensor src = pad_batch(sentences, true);
  nn::SearchOptions o;
  o.max_len_a = 1.0;
  o.max_len_b = 3;
  o.nbest = o.beam = 3;
  const auto unknowns = [&](const std::vector<std::vector<nn::Hypothesis>>& all) {
    int64_t count = 0;
    for (const auto& hyps : all)
      for (const nn::Hypothesis& h : hyps) count += std::count(h.tokens.begin(), h.tokens.end(), kUnk);
    return count;
  };
  for (double penalty : {-4.0, 1.5}) {
    o.unk_penalty = penalty;
    INFO("penalty " << penalty);
    check_against_reference({model.get()}, src, o);
  }
  o.unk_penalty = -50;  // <unk> wins every step the search may choose it
  CHECK(unknowns(nn::beam_search(*model, src, o)) > 0);
  o.unk_penalty = 1e6;  // never chosen
  CHECK(unknowns(nn::beam_search(*model, src, o)) == 0);
  o.unk_penalty = -50;
  check_greedy_equals_beam1(*model, src, o);
}

TEST_CASE("greedy search equals beam search with beam 1, token for token and score for score") {
  auto model = peaky_model(22);
  Tensor src = pad_batch(random_sentences({5, 1, 3, 7, 2}, 10, 31), true);
  nn::SearchOptions o;
  o.beam = 1;
  o.lenpen = 0.6;
  o.max_len_b = 12;
  o.return_attention = true;
  std::vector<nn::Hypothesis> greedy = nn::greedy_search(*model, src, o);
  std::vector<std::vector<nn::Hypothesis>> beam = nn::beam_search(*model, src, o);
  REQUIRE(greedy.size() == 5);
  for (size_t i = 0; i < greedy.size(); ++i) {
    CHECK(greedy[i].tokens == beam[i][0].tokens);
    CHECK(greedy[i].score == beam[i][0].score);
    CHECK(greedy[i].positional_scores == beam[i][0].positional_scores);
    CHECK(greedy[i].attention.to_vector() == beam[i][0].attention.to_vector());
  }
}

TEST_CASE("batching does not change a sentence's translation") {
  auto model = peaky_model(23);
  std::vector<std::vector<int64_t>> sentences = random_sentences({6, 1, 4}, 10, 32);
  nn::SearchOptions o;
  o.beam = 4;
  o.nbest = 2;
  o.max_len_b = 10;  // a = 0: max_len does not depend on the padded length
  std::vector<std::vector<nn::Hypothesis>> batched = nn::beam_search(*model, pad_batch(sentences, true), o);
  std::vector<nn::Hypothesis> greedy_batched = nn::greedy_search(*model, pad_batch(sentences, true), o);
  for (size_t i = 0; i < sentences.size(); ++i) {
    std::vector<std::vector<nn::Hypothesis>> alone = nn::beam_search(*model, pad_batch({sentences[i]}, true), o);
    REQUIRE(alone[0].size() == batched[i].size());
    for (size_t h = 0; h < alone[0].size(); ++h) check_same(alone[0][h], batched[i][h], 1e-5);
    check_same(nn::greedy_search(*model, pad_batch({sentences[i]}, true), o)[0], greedy_batched[i], 1e-5);
  }
}

TEST_CASE("hypotheses respect max_len, min_len, pad, score normalisation, n-best order, attention") {
  auto model = peaky_model(24);
  Tensor src = pad_batch(random_sentences({3, 5}, 10, 33), true);
  nn::SearchOptions o;
  o.beam = 4;
  o.nbest = 4;
  o.lenpen = 0.6;
  o.min_len = 2;
  o.max_len_b = 4;
  o.return_attention = true;
  for (const std::vector<nn::Hypothesis>& hyps : nn::beam_search(*model, src, o)) {
    REQUIRE(hyps.size() == 4);
    for (size_t h = 0; h < hyps.size(); ++h) {
      const nn::Hypothesis& hyp = hyps[h];
      const int64_t L = int64_t(hyp.tokens.size());
      CHECK(L >= o.min_len + 1);
      CHECK(L <= o.max_len_b + 1);
      CHECK(hyp.tokens.back() == kEos);
      CHECK(std::count(hyp.tokens.begin(), hyp.tokens.end(), kPad) == 0);
      CHECK(std::count(hyp.tokens.begin(), hyp.tokens.end() - 1, kEos) == 0);
      REQUIRE(int64_t(hyp.positional_scores.size()) == L);
      const double total = std::accumulate(hyp.positional_scores.begin(), hyp.positional_scores.end(), 0.0);
      CHECK(hyp.score == Approx(total / std::pow(double(L), 0.6)).epsilon(1e-5));
      for (double p : hyp.positional_scores) CHECK(p <= 0.0);
      if (h > 0) CHECK(hyps[h - 1].score >= hyp.score);
      REQUIRE(hyp.attention.shape() == Shape{L, src.size(1)});
      CHECK(ops::sum(hyp.attention.select(0, 0)).item() == Approx(1.0));
    }
  }
  // The first sentence is left-padded by 2: no attention on the pads.
  std::vector<nn::Hypothesis> first = nn::beam_search(*model, src, o)[0];
  CHECK(ops::amax(first[0].attention.narrow(1, 0, 2)).item() == 0.0);
}

TEST_CASE("an ensemble searches the mean of its models' probabilities (fairseq's --path a:b)") {
  auto first = peaky_model(41), second = peaky_model(42);
  const nn::ModelEnsemble ensemble({first.get(), second.get()});
  NoGradGuard no_grad;
  std::vector<std::vector<int64_t>> sentences = random_sentences({4, 2, 5}, 10, 43);
  Tensor src = pad_batch(sentences, true);
  nn::SearchOptions o;
  o.max_len_a = 1.0;
  o.max_len_b = 2;
  for (int64_t beam : {1, 4}) {
    o.nbest = o.beam = beam;
    INFO("beam " << beam);
    check_against_reference({first.get(), second.get()}, src, o);
  }
  o.nbest = o.beam = 1;
  std::vector<nn::Hypothesis> greedy = nn::greedy_search(ensemble, src, o);
  std::vector<std::vector<nn::Hypothesis>> beam1 = nn::beam_search(ensemble, src, o);
  for (size_t i = 0; i < sentences.size(); ++i) check_same(greedy[i], beam1[i][0], 0.0);

  // A model with itself is the model: the same translations, the same scores to rounding.
  o.nbest = o.beam = 3;
  std::vector<std::vector<nn::Hypothesis>> alone = nn::beam_search(*first, src, o);
  const nn::ModelEnsemble same_twice({first.get(), first.get()});
  std::vector<std::vector<nn::Hypothesis>> twice = nn::beam_search(same_twice, src, o);
  for (size_t i = 0; i < sentences.size(); ++i)
    for (size_t h = 0; h < alone[i].size(); ++h) check_same(twice[i][h], alone[i][h], 1e-5);
}

TEST_CASE("an ensemble's step: mean attention, the first model's features; mismatched models refused") {
  auto first = peaky_model(44), second = peaky_model(45);
  const nn::ModelEnsemble ensemble({first.get(), second.get()});
  NoGradGuard no_grad;
  Tensor src = pad_batch(random_sentences({3, 4}, 10, 46), true);
  Tensor tokens = from_vector(std::vector<int64_t>{kEos, kEos}, {2});
  nn::ModelEnsemble::State state = ensemble.start(src);
  Tensor attention, features;
  ensemble.decode_step(tokens, state, &attention, &features);
  std::vector<double> expected_attention(size_t(attention.numel()), 0.0);
  for (auto* model : {first.get(), second.get()}) {
    nn::DecoderState alone = model->init_decoder_state(model->encode(src));
    Tensor model_attention, model_features;
    model->decode_step(tokens, alone, &model_attention, &model_features);
    const std::vector<double> a = model_attention.to_vector();
    for (size_t k = 0; k < a.size(); ++k) expected_attention[k] += a[k] / 2.0;
    if (model == first.get()) CHECK(features.to_vector() == model_features.to_vector());
  }
  const std::vector<double> got = attention.to_vector();
  for (size_t k = 0; k < got.size(); ++k) CHECK(got[k] == Approx(expected_attention[k]).margin(1e-6));

  auto larger = peaky_model(47, 12);
  CHECK_THROWS_WITH(nn::ModelEnsemble({first.get(), larger.get()}), Catch::Contains("share their dictionaries"));
  CHECK_THROWS_WITH(nn::ModelEnsemble(std::vector<nn::EncoderDecoderModel*>{}), Catch::Contains("no model"));
}

TEST_CASE("sampling: top-k 1 is greedy; greedy equals beam 1; scores are the model's; one seed, one output") {
  auto model = peaky_model(48);
  NoGradGuard no_grad;
  std::vector<std::vector<int64_t>> sentences = random_sentences({4, 2, 5, 3}, 10, 49);
  Tensor src = pad_batch(sentences, true);
  nn::SearchOptions o;
  o.max_len_a = 1.0;
  o.max_len_b = 2;
  const auto sampling = [](uint64_t seed, int64_t topk) {
    nn::SamplingOptions s;
    s.topk = topk;
    s.generator = std::make_shared<Generator>(seed);
    return s;
  };
  o.sampling = sampling(5, 1);
  std::vector<nn::Hypothesis> top1 = nn::greedy_search(*model, src, o);
  o.sampling.reset();
  std::vector<nn::Hypothesis> greedy = nn::greedy_search(*model, src, o);
  for (size_t i = 0; i < sentences.size(); ++i) {
    INFO("top-k 1 against greedy, sentence " << i);
    check_same(top1[i], greedy[i], 0.0);
  }

  o.nbest = o.beam = 1;
  o.sampling = sampling(6, 0);
  std::vector<nn::Hypothesis> drawn = nn::greedy_search(*model, src, o);
  o.sampling = sampling(6, 0);
  std::vector<std::vector<nn::Hypothesis>> beam1 = nn::beam_search(*model, src, o);
  size_t differing = 0;  // drawn, not searched: some sentence leaves the most probable path
  for (size_t i = 0; i < sentences.size(); ++i) {
    INFO("sampled greedy against sampled beam 1, sentence " << i);
    check_same(drawn[i], beam1[i][0], 0.0);
    differing += drawn[i].tokens != greedy[i].tokens;
  }
  CHECK(differing > 0);

  o.nbest = o.beam = 3;
  o.sampling = sampling(7, 0);
  std::vector<std::vector<nn::Hypothesis>> samples = nn::beam_search(*model, src, o);
  o.sampling = sampling(7, 0);
  std::vector<std::vector<nn::Hypothesis>> again = nn::beam_search(*model, src, o);
  for (size_t i = 0; i < sentences.size(); ++i) {
    REQUIRE(samples[i].size() == 3);
    for (size_t h = 0; h < 3; ++h) {
      const nn::Hypothesis& hyp = samples[i][h];
      check_same(again[i][h], hyp, 0.0);
      // Each token's score is the model's log-probability of it after the tokens before it.
      for (size_t t = 0; t < hyp.tokens.size(); ++t) {
        const std::vector<int64_t> prefix(hyp.tokens.begin(), hyp.tokens.begin() + int64_t(t));
        const std::vector<float> lp = full_forward_log_probs({model.get()}, src.narrow(0, int64_t(i), 1), prefix);
        CHECK(hyp.positional_scores[t] == Approx(lp[size_t(hyp.tokens[t])]).margin(1e-4));
      }
    }
  }
}

TEST_CASE("temperature T: every step's log-probabilities are those of softmax(logits / T)") {
  auto model = peaky_model(50);
  NoGradGuard no_grad;
  Tensor src = pad_batch(random_sentences({3, 4}, 10, 51), true);
  Tensor tokens = from_vector(std::vector<int64_t>{kEos, kEos}, {2});
  const nn::ModelEnsemble alone(*model);
  nn::ModelEnsemble::State plain_state = alone.start(src), tempered_state = alone.start(src);
  const std::vector<double> plain = alone.decode_step(tokens, plain_state).to_vector();
  const std::vector<double> tempered = alone.decode_step(tokens, tempered_state, nullptr, nullptr, 0.5).to_vector();
  const int64_t vocab = 10;
  for (int64_t r = 0; r < 2; ++r) {
    double normaliser = 0.0;
    for (int64_t v = 0; v < vocab; ++v) normaliser += std::exp(2.0 * plain[size_t(r * vocab + v)]);
    for (int64_t v = 0; v < vocab; ++v)
      CHECK(tempered[size_t(r * vocab + v)] ==
            Approx(2.0 * plain[size_t(r * vocab + v)] - std::log(normaliser)).margin(1e-5));
  }
  CHECK_THROWS_WITH(alone.decode_step(tokens, tempered_state, nullptr, nullptr, 0.0), Catch::Contains("temperature"));
}

TEST_CASE("search rejects bad options and inputs") {
  auto model = peaky_model(25);
  Tensor src = pad_batch(random_sentences({3}, 10, 34), true);
  nn::SearchOptions o;
  o.beam = 0;
  CHECK_THROWS_AS(nn::beam_search(*model, src, o), Error);
  o.beam = 2;
  o.nbest = 3;
  CHECK_THROWS_WITH(nn::beam_search(*model, src, o), Catch::Contains("nbest"));
  o.nbest = 1;
  o.beam = 10;  // vocabulary 10: at most 9 candidates (all but pad) at step 0
  CHECK_THROWS_WITH(nn::beam_search(*model, src, o), Catch::Contains("vocabulary"));
  CHECK_THROWS_AS(nn::greedy_search(*model, src.to(DType::Float32), o), Error);
}

TEST_CASE("search gives every sentence one hypothesis when none can finish: NaN model, max_len 0 or below") {
  auto model = peaky_model(26);
  Tensor src = pad_batch(random_sentences({3, 5}, 10, 35), true);
  nn::SearchOptions o;
  o.nbest = 1;
  SECTION("a max_len of 0 or less (clamped to 0) gives </s> alone, for every beam size") {
    for (const auto& [a, b] : std::vector<std::pair<double, int64_t>>{{0.0, 0}, {0.0, -1}, {-1.0, -5}}) {
      o.max_len_a = a;
      o.max_len_b = b;
      for (int64_t beam : {1, 2, 5}) {
        o.beam = beam;
        for (const nn::Hypothesis& h : nn::greedy_search(*model, src, o)) CHECK(h.tokens == std::vector<int64_t>{kEos});
        for (const std::vector<nn::Hypothesis>& hyps : nn::beam_search(*model, src, o)) {
          REQUIRE(hyps.size() == 1);
          CHECK(hyps[0].tokens == std::vector<int64_t>{kEos});
        }
      }
    }
  }
  SECTION("a NaN or infinite max_len is refused") {
    o.max_len_a = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(nn::beam_search(*model, src, o), Catch::Contains("not a number"));
    o.max_len_a = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH(nn::greedy_search(*model, src, o), Catch::Contains("not a number"));
  }
  SECTION("a model whose outputs are NaN: one hypothesis of max_len + 1 tokens scoring −∞, greedy and beam alike") {
    NoGradGuard no_grad;
    model->decoder->output_projection.data_only().fill_(std::numeric_limits<double>::quiet_NaN());
    o.max_len_b = 3;
    for (int64_t beam : {1, 2, 5}) {
      o.beam = beam;
      std::vector<std::vector<nn::Hypothesis>> all;
      if (beam == 1) {
        for (nn::Hypothesis& h : nn::greedy_search(*model, src, o)) all.push_back({h});
      } else {
        all = nn::beam_search(*model, src, o);
      }
      REQUIRE(all.size() == 2);
      for (const std::vector<nn::Hypothesis>& hyps : all) {
        REQUIRE(hyps.size() == 1);
        CHECK(hyps[0].tokens.size() == 4);
        CHECK(hyps[0].tokens.back() == kEos);
        CHECK(hyps[0].score == kMinusInfinity);
      }
    }
  }
}

TEST_CASE("prefix tokens begin every hypothesis; a prefix ending in </s> is the whole hypothesis") {
  auto model = peaky_model(41, 12);
  const std::vector<std::vector<int64_t>> sentences = random_sentences({5, 3, 6}, 12, 41);
  nn::SearchOptions o;
  o.beam = 3;
  o.nbest = 3;
  o.max_len_b = 10;
  o.min_len = 4;  // not applied while a prefix is forced: the </s> of the third prefix ends it there
  const std::vector<std::vector<int64_t>> prefixes = {{5, 6}, {}, {7, kEos}};
  const auto hypotheses = nn::beam_search(*model, pad_batch(sentences, true), o, prefixes);
  for (const nn::Hypothesis& h : hypotheses[0]) {
    REQUIRE(h.tokens.size() >= 3);
    CHECK(std::vector<int64_t>(h.tokens.begin(), h.tokens.begin() + 2) == prefixes[0]);
  }
  // While any prefix is forced (the batch's widest, as fairseq's padded prefix tensor), min_len is
  // not applied to any sentence; after that it is.
  for (const nn::Hypothesis& h : hypotheses[1]) CHECK((h.tokens.size() <= 2 || h.tokens.size() >= 5));
  for (const nn::Hypothesis& h : hypotheses[2]) CHECK(h.tokens == prefixes[2]);
  // A prefix is the model's own choice when it is the search's: the same hypotheses as without.
  const auto free = nn::beam_search(*model, pad_batch({sentences[0]}, true), o);
  const std::vector<int64_t> best = free[0][0].tokens;
  const auto forced = nn::beam_search(*model, pad_batch({sentences[0]}, true), o, {{best[0]}});
  CHECK(forced[0][0].tokens == best);
  CHECK(forced[0][0].score == Approx(free[0][0].score));
}

TEST_CASE("match_source_len ends the best hypothesis after as many tokens as its source has") {
  auto model = peaky_model(42, 12);
  const std::vector<std::vector<int64_t>> sentences = random_sentences({4, 7, 2}, 12, 42);
  nn::SearchOptions o;
  o.beam = 3;
  o.match_source_len = true;
  const auto hypotheses = nn::beam_search(*model, pad_batch(sentences, true), o);
  for (size_t i = 0; i < sentences.size(); ++i) {
    INFO("sentence " << i);
    CHECK(hypotheses[i][0].tokens.size() == sentences[i].size() + 1);  // the source's length with </s>, then </s>
    CHECK(hypotheses[i][0].tokens.back() == kEos);
  }
}

TEST_CASE("diverse beam search: a strong penalty gives each group its own first token") {
  auto [model, src, o] = strategy_case(43, {5, 4}, 4, 6);
  o.min_len = 2;
  o.diverse_beam_groups = 4;
  o.diverse_beam_strength = 1000;  // far beyond any log-probability gap
  for (const std::vector<nn::Hypothesis>& sentence : nn::beam_search(*model, src, o)) {
    REQUIRE(sentence.size() == 4);
    std::set<int64_t> first;
    for (const nn::Hypothesis& h : sentence) first.insert(h.tokens.front());
    CHECK(first.size() == 4);
  }
  o.diverse_beam_groups = 3;
  CHECK_THROWS_WITH(nn::beam_search(*model, src, o), Catch::Contains("multiple of the groups"));
  o.diverse_beam_groups = 2;
  o.match_source_len = true;
  CHECK_THROWS_WITH(nn::beam_search(*model, src, o), Catch::Contains("exclude one another"));
}

TEST_CASE("diverse siblings search: rate 0 is beam search; a rate reorders the hypotheses' continuations") {
  auto [model, src, o] = strategy_case(44, {5, 3, 6}, 3, 8);
  const auto plain = nn::beam_search(*model, src, o);
  o.diversity_rate = 0.0;
  const auto siblings = nn::beam_search(*model, src, o);
  for (size_t i = 0; i < plain.size(); ++i)
    for (size_t h = 0; h < plain[i].size(); ++h) {
      CHECK(siblings[i][h].tokens == plain[i][h].tokens);
      CHECK(siblings[i][h].score == Approx(plain[i][h].score));
    }
  // A rate lowers every continuation after the first step: the scores printed include it.
  o.diversity_rate = 5.0;
  for (const std::vector<nn::Hypothesis>& sentence : nn::beam_search(*model, src, o))
    for (const nn::Hypothesis& h : sentence)
      if (h.tokens.size() >= 2) CHECK(h.positional_scores[1] <= -5.0);
  o.match_source_len = true;
  CHECK_THROWS_WITH(nn::beam_search(*model, src, o), Catch::Contains("exclude one another"));
}

namespace {

// Whether `phrase` occurs in `tokens` at or after `from`; returns the position after it, or -1.
int64_t find_phrase(const std::vector<int64_t>& tokens, const std::vector<int64_t>& phrase, int64_t from) {
  const auto at = std::search(tokens.begin() + from, tokens.end(), phrase.begin(), phrase.end());
  return at == tokens.end() ? -1 : int64_t(at - tokens.begin() + std::ptrdiff_t(phrase.size()));
}

}  // namespace

TEST_CASE("lexical constraints: every hypothesis holds its sentence's phrases; none given is beam search") {
  auto [model, src, o] = strategy_case(45, {5, 3, 6}, 4, 12);
  const auto plain = nn::beam_search(*model, src, o);
  const std::vector<nn::Constraints> constraints = {{{7, 8}, {5}}, {}, {{9}, {9, 6}, {4}}};
  for (nn::ConstraintOrder order : {nn::ConstraintOrder::ordered, nn::ConstraintOrder::unordered}) {
    o.constraint_order = order;
    const auto constrained = nn::beam_search(*model, src, o, {}, constraints);
    for (size_t i : {size_t(0), size_t(2)})
      for (const nn::Hypothesis& h : constrained[i]) {
        INFO("sentence " << i);
        int64_t from = 0;
        for (const std::vector<int64_t>& phrase : constraints[i]) {
          const int64_t after = find_phrase(h.tokens, phrase, order == nn::ConstraintOrder::ordered ? from : 0);
          CHECK(after >= 0);
          from = std::max<int64_t>(after, 0);
        }
      }
    // A sentence without constraints is searched as by plain beam search.
    REQUIRE(constrained[1].size() == plain[1].size());
    for (size_t h = 0; h < plain[1].size(); ++h) {
      CHECK(constrained[1][h].tokens == plain[1][h].tokens);
      CHECK(constrained[1][h].score == Approx(plain[1][h].score));
    }
  }
  // Too short a max_len to hold the phrases: the hypotheses end there, phrases unmet.
  o.max_len_b = 2;
  for (const std::vector<nn::Hypothesis>& sentence : nn::beam_search(*model, src, o, {}, constraints)) {
    REQUIRE_FALSE(sentence.empty());
    for (const nn::Hypothesis& h : sentence) CHECK(std::isfinite(h.score));
  }
  // With plain beam search only, one set of constraints per sentence.
  CHECK_THROWS_WITH(nn::beam_search(*model, src, o, {{5}, {}, {}}, constraints), Catch::Contains("prefix"));
  CHECK_THROWS_WITH(nn::beam_search(*model, src, o, {}, {{{5}}}), Catch::Contains("1 sentences' constraints for 3"));
  o.diversity_rate = 0.5;
  CHECK_THROWS_WITH(nn::beam_search(*model, src, o, {}, constraints), Catch::Contains("plain beam search only"));
}
