#include "nn/search/beam_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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
  // Diverse beam search: G×G, entry (i, j) the number of steps and ranks at which group i's
  // candidate token was group j's (fairseq's group_overlap with its default discount 1).
  std::vector<double> group_overlap;
  // Constrained search: each hypothesis's progress through the sentence's constraints.
  std::vector<ConstraintState> constraint_states;
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
      for (const PartialHypothesis& h : s.hypotheses) previous.push_back(h.score());
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
      out[i].push_back({live[i].hypotheses[size_t(b)].score() + d.log_prob, b, d.token});
    }
  return out;
}

// Hypothesis `beam`'s continuations by every token v of its next-token log-probabilities `row`:
// (row[v] + strength · penalty[v]) + cumulative, the penalty term only when a penalty is given.
void append_continuations(std::vector<Candidate>& out, const float* row, int64_t vocab, int64_t beam,
                          float cumulative, const std::vector<float>* penalty = nullptr, float strength = 0.0f) {
  for (int64_t v = 0; v < vocab; ++v)
    out.push_back({(penalty ? row[v] + strength * (*penalty)[size_t(v)] : row[v]) + cumulative, beam, v});
}

// The k highest-scoring candidates, best first (equal scores by hypothesis, then token).
void keep_best(std::vector<Candidate>& candidates, size_t k) {
  std::partial_sort(candidates.begin(), candidates.begin() + std::ptrdiff_t(k), candidates.end(),
                    [](const Candidate& a, const Candidate& b) {
                      return a.score != b.score ? a.score > b.score
                                                : (a.beam != b.beam ? a.beam < b.beam : a.token < b.token);
                    });
  candidates.resize(k);
}

// Diverse beam search (fairseq's search.DiverseBeamSearch with its defaults: diversity discount
// 1, one candidate per hypothesis). Group g holds beams g, g + G, g + 2G, …; in turn, each
// group's next-token scores are lowered by diverse_beam_strength × Σ over earlier groups' chosen
// tokens of (1 + their overlap so far with g), and the group takes its top beam/G candidates
// (step 0: from its first beam only). The candidates are interleaved rank by rank across groups,
// beam in all; their (penalised) scores become the hypotheses' cumulative scores, as in fairseq.
std::vector<std::vector<Candidate>> diverse_candidates(const Tensor& log_probs, std::vector<SentenceSearch>& live,
                                                       int64_t beam, int64_t step, const SearchOptions& options) {
  const int64_t groups = options.diverse_beam_groups, per_group = beam / groups, vocab = log_probs.size(1);
  const Tensor scores = log_probs.to(Device::cpu()).contiguous();
  const float* all = scores.data<float>();
  const float strength = float(-options.diverse_beam_strength);
  std::vector<std::vector<Candidate>> out(live.size());
  for (size_t i = 0; i < live.size(); ++i) {
    SentenceSearch& s = live[i];
    if (s.group_overlap.empty()) s.group_overlap.assign(size_t(groups * groups), 0.0);
    std::vector<std::vector<Candidate>> chosen(static_cast<size_t>(groups));
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<float> penalty(size_t(vocab), 0.0f);
      for (int64_t earlier = 0; earlier < g; ++earlier)
        for (const Candidate& c : chosen[size_t(earlier)])
          penalty[size_t(c.token)] += float(1.0 + (step > 0 ? s.group_overlap[size_t(g * groups + earlier)] : 0.0));
      std::vector<Candidate> group;
      for (int64_t j = 0; j < (step == 0 ? 1 : per_group); ++j) {
        const int64_t b = g + j * groups;
        const float cumulative = s.hypotheses[size_t(b)].score();
        append_continuations(group, all + (int64_t(i) * beam + b) * vocab, vocab, b, cumulative, &penalty, strength);
      }
      keep_best(group, size_t(std::min<int64_t>(per_group, int64_t(group.size()) - 1)));
      chosen[size_t(g)] = std::move(group);
    }
    for (size_t rank = 0; rank < chosen.front().size(); ++rank)
      for (int64_t g = 0; g < groups; ++g) out[i].push_back(chosen[size_t(g)][rank]);
    for (int64_t a = 0; a < groups; ++a)
      for (int64_t b = 0; b < groups; ++b)
        for (size_t rank = 0; rank < chosen.front().size(); ++rank)
          s.group_overlap[size_t(a * groups + b)] +=
              chosen[size_t(a)][rank].token == chosen[size_t(b)][rank].token ? 1.0 : 0.0;
  }
  return out;
}

// Diverse siblings search (Li et al. 2016, "A Simple, Fast Diverse Decoding Algorithm";
// fairseq's search.DiverseSiblingsSearch): from step 1 on, each hypothesis's top k = 2·beam
// continuations by cumulative score are lowered by rate × their rank (1 for the best), and the k
// best of all of them are the candidates, their lowered scores the new cumulative scores. Step 0
// is plain beam search.
std::vector<std::vector<Candidate>> sibling_candidates(const Tensor& log_probs, const std::vector<SentenceSearch>& live,
                                                       int64_t beam, int64_t step, double rate) {
  if (step == 0) return top_candidates(log_probs, live, beam, step);
  const int64_t vocab = log_probs.size(1);
  const int64_t k = std::min(2 * beam, beam * vocab - 1);
  const Tensor scores = log_probs.to(Device::cpu()).contiguous();
  const float* all = scores.data<float>();
  std::vector<std::vector<Candidate>> out(live.size());
  for (size_t i = 0; i < live.size(); ++i) {
    std::vector<Candidate> siblings;
    for (int64_t b = 0; b < beam; ++b) {
      std::vector<Candidate> own;
      append_continuations(own, all + (int64_t(i) * beam + b) * vocab, vocab, b,
                           live[i].hypotheses[size_t(b)].score());
      keep_best(own, size_t(std::min(k, vocab)));
      for (size_t rank = 0; rank < own.size(); ++rank)
        siblings.push_back({own[rank].score - float(rank + 1) * float(rate), b, own[rank].token});
    }
    keep_best(siblings, size_t(std::min<int64_t>(k, int64_t(siblings.size()))));
    out[i] = std::move(siblings);
  }
  return out;
}

// Constrained search (fairseq's search.LexicallyConstrainedBeamSearch): from step 1 on, a
// hypothesis that has not met all its constraints may not end. At max_len, where only </s> is
// left, a sentence none of whose hypotheses met them all ends them all, constraints unmet; and
// the candidates there are the plain top ones, so that the ends that may happen come first
// (fairseq deals them across banks there too, where an end can fall behind the first `beam`
// candidates and its search stops with an assertion).
void forbid_unfinished_ends(Tensor& log_probs, const std::vector<SentenceSearch>& live, int64_t step, int64_t max_len,
                            int64_t beam, int64_t eos) {
  if (step == 0) return;
  std::vector<float> ban(live.size() * size_t(beam), 0.0f);  // added to each hypothesis's </s>
  for (size_t i = 0; i < live.size(); ++i) {
    const std::vector<ConstraintState>& states = live[i].constraint_states;
    if (step >= max_len &&
        std::none_of(states.begin(), states.end(), [](const ConstraintState& c) { return c.finished(); }))
      continue;
    for (size_t b = 0; b < size_t(beam); ++b)
      if (!states[b].finished()) ban[i * size_t(beam) + b] = -std::numeric_limits<float>::infinity();
  }
  Tensor ends = log_probs.select(1, eos);
  ends.copy_(ops::add(ends, from_vector(ban, {int64_t(ban.size())}, log_probs.device())));
}

// A candidate of constrained search with the constraint state its token leads to.
struct ConstrainedCandidate {
  Candidate candidate;
  ConstraintState state;
  int64_t bank;
};

// Dynamic beam allocation (Post & Vilar 2018) as fairseq does it for one sentence: the 2·beam
// best candidates, each hypothesis's best continuation (step ≥ 1) and every continuation that
// makes progress on a constraint, ordered by bank (constraint tokens met) then score (sort key
// score − 100·(distinct constraint tokens − bank), in float32), duplicates dropped, then dealt
// round-robin across banks — the best of the highest bank, the best of the next, …, then each
// bank's second best — and cut to as many candidates as beam search takes.
// Both sorts are std::sort, not stable: the sort of PyTorch's CPU tensors, so that candidates
// whose keys tie in float32 come out in fairseq's order.
std::vector<ConstrainedCandidate> allocate_across_banks(std::vector<ConstrainedCandidate> pool, size_t keep,
                                                        int64_t distinct_tokens) {
  std::sort(pool.begin(), pool.end(), [&](const ConstrainedCandidate& a, const ConstrainedCandidate& b) {
    auto key = [&](const ConstrainedCandidate& c) {
      return float(-100 * (distinct_tokens - c.bank)) + c.candidate.score;
    };
    return key(a) > key(b);
  });
  std::vector<ConstrainedCandidate> unique;
  for (size_t i = 0; i < pool.size(); ++i) {
    const Candidate& c = pool[i].candidate;
    const Candidate& before = pool[(i + pool.size() - 1) % pool.size()].candidate;  // fairseq compares cyclically
    if (c.beam != before.beam || c.token != before.token || pool.size() == 1) unique.push_back(std::move(pool[i]));
  }
  std::vector<int64_t> stripe(unique.size());
  int64_t rank = -1, bank = unique.empty() ? 0 : unique.front().bank;
  for (size_t i = 0; i < unique.size(); ++i) {
    rank = unique[i].bank == bank ? rank + 1 : 0;
    bank = unique[i].bank;
    stripe[i] = distinct_tokens - bank + rank * int64_t(unique.size() + 1);
  }
  std::vector<size_t> order(unique.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return stripe[a] < stripe[b]; });
  std::vector<ConstrainedCandidate> dealt;
  for (size_t i = 0; i < std::min(keep, order.size()); ++i) dealt.push_back(std::move(unique[order[i]]));
  return dealt;
}

// The candidates of constrained search, and in `states` the constraint state of each.
std::vector<std::vector<Candidate>> constrained_candidates(const Tensor& log_probs,
                                                           const std::vector<SentenceSearch>& live, int64_t beam,
                                                           int64_t step,
                                                           std::vector<std::vector<ConstraintState>>& states) {
  std::vector<std::vector<Candidate>> out = top_candidates(log_probs, live, beam, step);
  const int64_t vocab = log_probs.size(1);
  const Tensor scores = log_probs.to(Device::cpu()).contiguous();
  const float* all = scores.data<float>();
  states.assign(live.size(), {});
  for (size_t i = 0; i < live.size(); ++i) {
    const SentenceSearch& s = live[i];
    std::vector<Candidate> pool = out[i], progress;
    const int64_t rows = step == 0 ? 1 : beam;  // at step 0 only beam 0
    for (int64_t b = 0; b < rows; ++b) {
      const float* row = all + (int64_t(i) * beam + b) * vocab;
      const float cumulative = s.hypotheses[size_t(b)].score();
      if (step > 0) {
        const int64_t best = std::max_element(row, row + vocab) - row;
        pool.push_back({row[best] + cumulative, b, best});
      }
      for (int64_t token : s.constraint_states[size_t(b)].next_tokens())
        progress.push_back({row[token] + cumulative, b, token});
    }
    pool.insert(pool.end(), progress.begin(), progress.end());  // in fairseq's order
    std::vector<ConstrainedCandidate> ranked;
    for (const Candidate& c : pool) {
      ConstraintState next = s.constraint_states[size_t(c.beam)].advance(c.token);
      const int64_t bank = next.bank();
      ranked.push_back({c, std::move(next), bank});
    }
    const int64_t distinct = s.constraint_states.front().set().distinct_tokens();
    const size_t keep = out[i].size();
    out[i].clear();
    for (ConstrainedCandidate& c : allocate_across_banks(std::move(ranked), keep, distinct)) {
      out[i].push_back(c.candidate);
      states[i].push_back(std::move(c.state));
    }
  }
  return out;
}

// fairseq's prefix tokens (--prefix-size): each hypothesis of sentence s must take
// prefixes[s][step] (a step past its prefix forces nothing). A prefix that ends in </s> (a
// reference shorter than the prefix size) makes every hypothesis of its sentence a copy of the
// first, as fairseq's replicate_first_beam does, so that all end as the prefix.
void force_prefix_tokens(Tensor& log_probs, std::vector<SentenceSearch>& live,
                         const std::vector<std::vector<int64_t>>& prefixes, int64_t step, int64_t beam, int64_t eos) {
  for (size_t i = 0; i < live.size(); ++i) {
    SentenceSearch& s = live[i];
    const std::vector<int64_t>& prefix = prefixes[size_t(s.sentence)];
    if (step >= int64_t(prefix.size())) continue;
    const int64_t first_row = int64_t(i) * beam;
    for (int64_t b = 0; b < beam; ++b) search_detail::force_token(log_probs.select(0, first_row + b), prefix[size_t(step)]);
    if (prefix[size_t(step)] != eos) continue;
    for (int64_t b = 1; b < beam; ++b) {
      s.hypotheses[size_t(b)] = s.hypotheses[0];
      log_probs.select(0, first_row + b).copy_(log_probs.select(0, first_row));
    }
  }
}

// fairseq's --match-source-len (its LengthConstrainedBeamSearch with min and max length the
// source's): </s> is forbidden before step src_len and free (log-probability 0) from there on.
void match_source_lengths(Tensor& log_probs, const std::vector<SentenceSearch>& live,
                          const std::vector<int64_t>& source_lengths, int64_t step, int64_t beam, int64_t eos) {
  for (size_t i = 0; i < live.size(); ++i) {
    const bool early = step < source_lengths[size_t(live[i].sentence)];
    for (int64_t b = 0; b < beam; ++b)
      log_probs.select(0, int64_t(i) * beam + b)
          .select(0, eos)
          .fill_(early ? -std::numeric_limits<double>::infinity() : 0.0);
  }
}

// Each sentence's source length, </s> included (the row's tokens that are not padding).
std::vector<int64_t> source_lengths(const Tensor& src_tokens, int64_t pad) {
  const std::vector<double> tokens = src_tokens.to(Device::cpu()).to_vector();
  const int64_t width = src_tokens.size(1);
  std::vector<int64_t> lengths(size_t(src_tokens.size(0)), 0);
  for (size_t i = 0; i < tokens.size(); ++i) lengths[i / size_t(width)] += int64_t(tokens[i]) != pad;
  return lengths;
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
  ATTN_CHECK(o.diverse_beam_groups >= 0 && (o.diverse_beam_groups == 0 || o.beam % o.diverse_beam_groups == 0),
             "beam_search: diverse beam search needs the beam ({}) to be a multiple of the groups ({})", o.beam,
             o.diverse_beam_groups);
  ATTN_CHECK(o.exclusive_strategies() <= 1,
             "beam_search: sampling, diverse beam search, match_source_len and diverse siblings exclude one another "
             "(as in fairseq)");
  ATTN_CHECK(!o.constraint_order || !o.alternative_strategy(),
             "beam_search: lexical constraints work with plain beam search only, not with sampling, diverse beam "
             "search, match_source_len or diverse siblings (as in fairseq)");
}

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(const ModelEnsemble& models, const Tensor& src_tokens,
                                                 const SearchOptions& options,
                                                 const std::vector<std::vector<int64_t>>& prefixes,
                                                 const std::vector<Constraints>& constraints) {
  ATTN_CHECK(src_tokens.dim() == 2 && src_tokens.dtype() == DType::Int64,
             "beam_search: src_tokens must be int64 [B, S], got {} {}", dtype_name(src_tokens.dtype()),
             src_tokens.shape().str());
  const TransformerConfig& config = models.config();
  check_options(options, config.tgt_vocab_size);
  NoGradGuard no_grad;
  const int64_t batch = src_tokens.size(0), beam = options.beam, eos = config.eos_idx;
  const Device device = src_tokens.device();
  const int64_t max_len = max_output_length(options, src_tokens.size(1), models.max_target_positions());
  ATTN_CHECK(prefixes.empty() || int64_t(prefixes.size()) == batch, "beam_search: {} prefixes for {} sentences",
             prefixes.size(), batch);
  size_t prefix_width = 0;
  for (const std::vector<int64_t>& prefix : prefixes) prefix_width = std::max(prefix_width, prefix.size());
  const std::vector<int64_t> lengths =
      options.match_source_len ? source_lengths(src_tokens, config.padding_idx) : std::vector<int64_t>();
  const bool constrained = options.constraint_order.has_value();
  ATTN_CHECK(!constrained || int64_t(constraints.size()) == batch,
             "beam_search: {} sentences' constraints for {} sentences", constraints.size(), batch);
  ATTN_CHECK(!constrained || prefixes.empty(),
             "beam_search: lexical constraints and prefix tokens exclude one another");

  ModelEnsemble::State state = models.start(src_tokens);
  const std::vector<int64_t> expand = repeated_rows(batch, beam);
  models.reorder(state, from_vector(expand, {batch * beam}, device));

  std::vector<std::vector<Hypothesis>> finalized(batch);
  std::vector<SentenceSearch> live(batch);
  for (int64_t i = 0; i < batch; ++i) {
    live[i] = {i, std::vector<PartialHypothesis>(beam), std::vector<bool>(beam, false), {}, {}};
    if (constrained)
      live[i].constraint_states.assign(size_t(beam), ConstraintState(std::make_shared<const ConstraintSet>(
                                                         constraints[size_t(i)], *options.constraint_order)));
  }
  Tensor last_tokens = full({batch * beam}, double(eos), DType::Int64, device);

  for (int64_t step = 0; step <= max_len && !live.empty(); ++step) {
    Tensor attention;
    Tensor log_probs = search_detail::next_log_probs(models, last_tokens, state,
                                                        options.return_attention ? &attention : nullptr, options);
    const bool forcing = step < int64_t(prefix_width) && step < max_len;
    search_detail::constrain_log_probs(log_probs, step, max_len, options, config, forcing);
    if (forcing) force_prefix_tokens(log_probs, live, prefixes, step, beam, eos);
    if (options.no_repeat_ngram_size != 0) {
      int64_t row = 0;  // decoder-state rows: sentence by sentence, beam by beam
      for (const SentenceSearch& s : live)
        for (const PartialHypothesis& h : s.hypotheses)
          h.block_repeated_ngrams(log_probs.select(0, row++), options.no_repeat_ngram_size, eos);
    }
    if (options.match_source_len) match_source_lengths(log_probs, live, lengths, step, beam, eos);
    if (constrained) forbid_unfinished_ends(log_probs, live, step, max_len, beam, eos);
    std::vector<std::vector<ConstraintState>> candidate_states;
    const std::vector<std::vector<Candidate>> candidates =
        constrained && step < max_len     ? constrained_candidates(log_probs, live, beam, step, candidate_states)
        : options.sampling                ? sampled_candidates(log_probs, live, beam, *options.sampling)
        : options.diverse_beam_groups > 0 ? diverse_candidates(log_probs, live, beam, step, options)
        : !options.match_source_len && options.diversity_rate > -1
            ? sibling_candidates(log_probs, live, beam, step, options.diversity_rate)
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
        // --match-source-len: an end past the source's length scores −∞ (fairseq's finalize_hypos).
        const bool too_long = options.match_source_len && step > lengths[size_t(s.sentence)];
        done.push_back(s.hypotheses[cands[c].beam].finished(
            eos, too_long ? -std::numeric_limits<float>::infinity() : cands[c].score,
            search_detail::attention_row(attention, row_of(cands[c])), options.lenpen));
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
      SentenceSearch next{s.sentence, {}, next_ignore, s.group_overlap, {}};
      for (size_t c : chosen) {
        const Candidate& cand = cands[c];
        if (constrained) next.constraint_states.push_back(candidate_states[i][c]);
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
