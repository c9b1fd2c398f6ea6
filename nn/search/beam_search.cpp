#include "nn/search/beam_search.hpp"

#include <algorithm>
#include <cmath>

#include "nn/search/search_common.hpp"

namespace attn::nn {
namespace {

using search_detail::PartialHypothesis;

// One sentence still being searched: its `beam` live hypotheses (rows of the decoder
// state), its finalised ones, and fairseq's cands_to_ignore flags (per candidate slot of
// the first `beam` candidates: a slot refilled from an </s> candidate is not finalised again
// at the next step).
struct SentenceSearch {
  int64_t sentence = 0;
  std::vector<PartialHypothesis> hypotheses;
  std::vector<bool> ignore;
};

struct Candidate {
  float score;
  int64_t beam;
  int64_t token;
};

// The top min(2·beam, width − 1) candidates of every sentence, sorted by cumulative score.
std::vector<std::vector<Candidate>> top_candidates(const Tensor& log_probs, const std::vector<SentenceSearch>& live,
                                                   int64_t beam, int64_t step) {
  const int64_t n = int64_t(live.size()), vocab = log_probs.size(1);
  Tensor totals;
  if (step == 0) {
    totals = log_probs.view({n, beam, vocab}).select(1, 0).contiguous();  // only beam 0 at step 0
  } else {
    std::vector<float> previous;
    for (const SentenceSearch& s : live)
      for (const PartialHypothesis& h : s.hypotheses) previous.push_back(h.cumulative.back());
    totals = ops::add(log_probs.view({n, beam, vocab}), from_vector(previous, {n, beam, 1}, log_probs.device())).view({n, beam * vocab});
  }
  const int64_t k = std::min(2 * beam, totals.size(1) - 1);
  ops::ValuesIndices top = ops::topk(totals, k);
  const std::vector<double> values = top.values.to_vector(), indices = top.indices.to_vector();
  std::vector<std::vector<Candidate>> out(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < k; ++c) {
      const int64_t index = int64_t(indices[i * k + c]);
      out[i].push_back({float(values[i * k + c]), index / vocab, index % vocab});
    }
  return out;
}

// With sampling: one drawn token per hypothesis, candidate b from hypothesis b (fairseq's
// search.Sampling), scored by the model's log-probability.
std::vector<std::vector<Candidate>> sampled_candidates(const Tensor& log_probs, const std::vector<SentenceSearch>& live,
                                                       int64_t beam, const SamplingOptions& sampling) {
  const std::vector<Draw> draws = sample_tokens(log_probs, sampling);
  std::vector<std::vector<Candidate>> out(live.size());
  for (size_t i = 0; i < live.size(); ++i)
    for (int64_t b = 0; b < beam; ++b) {
      const Draw& d = draws[i * size_t(beam) + size_t(b)];
      const std::vector<float>& cumulative = live[i].hypotheses[size_t(b)].cumulative;
      out[i].push_back({(cumulative.empty() ? 0.0f : cumulative.back()) + d.log_prob, b, d.token});
    }
  return out;
}

std::vector<int64_t> repeated_rows(int64_t batch, int64_t beam) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < batch; ++i) order.insert(order.end(), beam, i);
  return order;
}

void check_options(const SearchOptions& o, int64_t vocab) {
  ATTN_CHECK(o.beam >= 1, "beam_search: beam must be at least 1, got {}", o.beam);
  ATTN_CHECK(o.nbest >= 1 && o.nbest <= o.beam, "beam_search: nbest must be in [1, beam = {}], got {}", o.beam, o.nbest);
  ATTN_CHECK(vocab - 1 >= o.beam, "beam_search: beam {} needs a vocabulary of more than {} symbols, got {}", o.beam,
             o.beam, vocab);
}

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(const ModelEnsemble& models, const Tensor& src_tokens,
                                                 const SearchOptions& options) {
  ATTN_CHECK(src_tokens.dim() == 2 && src_tokens.dtype() == DType::Int64,
             "beam_search: src_tokens must be int64 [B, S], got {} {}", dtype_name(src_tokens.dtype()),
             src_tokens.shape().str());
  const TransformerConfig& config = models.config();
  check_options(options, config.tgt_vocab_size);
  NoGradGuard no_grad;
  const int64_t batch = src_tokens.size(0), beam = options.beam, eos = config.eos_idx;
  const Device device = src_tokens.device();
  const int64_t max_len = max_output_length(options, src_tokens.size(1), models.max_target_positions());

  ModelEnsemble::State state = models.start(src_tokens);
  const std::vector<int64_t> expand = repeated_rows(batch, beam);
  models.reorder(state, from_vector(expand, {batch * beam}, device));

  std::vector<std::vector<Hypothesis>> finalized(batch);
  std::vector<SentenceSearch> live(batch);
  for (int64_t i = 0; i < batch; ++i)
    live[i] = {i, std::vector<PartialHypothesis>(beam), std::vector<bool>(beam, false)};
  Tensor last_tokens = full({batch * beam}, double(eos), DType::Int64, device);

  for (int64_t step = 0; step <= max_len && !live.empty(); ++step) {
    Tensor attention;
    Tensor log_probs = search_detail::next_log_probs(models, last_tokens, state,
                                                        options.return_attention ? &attention : nullptr, options);
    search_detail::constrain_log_probs(log_probs, step, max_len, options, config);
    if (options.no_repeat_ngram_size != 0) {
      int64_t row = 0;  // decoder-state rows: sentence by sentence, beam by beam
      for (const SentenceSearch& s : live)
        for (const PartialHypothesis& h : s.hypotheses)
          h.block_repeated_ngrams(log_probs.select(0, row++), options.no_repeat_ngram_size, eos);
    }
    const std::vector<std::vector<Candidate>> candidates =
        options.sampling ? sampled_candidates(log_probs, live, beam, *options.sampling)
                         : top_candidates(log_probs, live, beam, step);

    std::vector<SentenceSearch> next_live;
    std::vector<int64_t> order, next_tokens;
    for (size_t i = 0; i < live.size(); ++i) {
      SentenceSearch& s = live[i];
      const std::vector<Candidate>& cands = candidates[i];
      auto row_of = [&](const Candidate& c) { return int64_t(i) * beam + c.beam; };
      std::vector<bool> is_eos(cands.size());
      for (size_t c = 0; c < cands.size(); ++c)
        is_eos[c] = cands[c].token == eos && !std::isinf(cands[c].score);
      // Finalise </s> among the first `beam` candidates (not in ignored slots).
      std::vector<Hypothesis>& done = finalized[s.sentence];
      for (int64_t c = 0; c < beam; ++c) {
        if (s.ignore[c]) is_eos[c] = false;
        if (!is_eos[c] || int64_t(done.size()) >= beam) continue;
        done.push_back(s.hypotheses[cands[c].beam].finished(
            eos, cands[c].score, search_detail::attention_row(attention, row_of(cands[c])), options.lenpen));
      }
      if (int64_t(done.size()) >= beam || step >= max_len) {
        // No candidate could end (every </s> score −∞, as when the model gives NaN): the
        // best candidate's hypothesis is closed with </s> so that no sentence is left
        // without a hypothesis; its score stays −∞ for the caller to report.
        if (done.empty())
          done.push_back(s.hypotheses[cands[0].beam].finished(
              eos, cands[0].score, search_detail::attention_row(attention, row_of(cands[0])), options.lenpen));
        continue;
      }
      // Refill: the first `beam` candidates that are not </s> (nor ignored slots); fairseq
      // fills up with the excluded ones when short, and ignores those slots next step.
      std::vector<size_t> chosen;
      std::vector<bool> next_ignore;
      for (bool excluded : {false, true})
        for (size_t c = 0; c < cands.size() && int64_t(chosen.size()) < beam; ++c)
          if ((is_eos[c] || (int64_t(c) < beam && s.ignore[c])) == excluded) {
            chosen.push_back(c);
            next_ignore.push_back(excluded);
          }
      SentenceSearch next{s.sentence, {}, next_ignore};
      for (size_t c : chosen) {
        const Candidate& cand = cands[c];
        next.hypotheses.push_back(s.hypotheses[cand.beam].extended(
            cand.token, cand.score, search_detail::attention_row(attention, row_of(cand))));
        order.push_back(row_of(cand));
        next_tokens.push_back(cand.token);
      }
      next_live.push_back(std::move(next));
    }
    live = std::move(next_live);
    if (live.empty()) break;
    models.reorder(state, from_vector(order, {int64_t(order.size())}, device));
    last_tokens = from_vector(next_tokens, {int64_t(next_tokens.size())}, device);
  }

  for (std::vector<Hypothesis>& hyps : finalized) {
    std::stable_sort(hyps.begin(), hyps.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (int64_t(hyps.size()) > options.nbest) hyps.resize(options.nbest);
  }
  return finalized;
}

}  // namespace attn::nn
