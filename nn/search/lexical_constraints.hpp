// Lexically constrained decoding (docs/models.md §1.10.6; Post & Vilar 2018, "Fast Lexically
// Constrained Decoding with Dynamic Beam Allocation"; Hu et al. 2019): every hypothesis that
// ends must contain each of a sentence's constraints (token sequences). A ConstraintState
// records one hypothesis's progress through them, with fairseq's semantics
// (token_generation_constraints.py), in either of its two representations:
// * ordered: the constraints must appear in the order given, anything between them; a token
//   that breaks a constraint half-way goes back to the start of the first one (or to having
//   its first token, when it is that token);
// * unordered: a trie of the constraints; a token that leaves the trie half-way counts the
//   longest constraint it completed (the path's deepest unfinished end) and starts again from
//   the root.
// A state's bank is the number of constraint tokens its hypothesis has met so far; the beam is
// shared out across banks (nn/search/beam_search.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace attn::nn {

enum class ConstraintOrder { ordered, unordered };

// One sentence's constraints, each a sequence of target token ids.
using Constraints = std::vector<std::vector<int64_t>>;

// One sentence's constraints, read-only and shared by the states of all its hypotheses.
class ConstraintSet {
 public:
  // Throws attn::Error on an empty constraint. No constraints at all is allowed (nothing to meet).
  ConstraintSet(const Constraints& constraints, ConstraintOrder order);

  // How many different tokens the constraints hold (fairseq's num_constraint_tokens).
  int64_t distinct_tokens() const { return distinct_tokens_; }

 private:
  friend class ConstraintState;
  struct Node {
    int64_t token = -1;
    int parent = -1;
    int terminal = 0;           // constraints that end here
    int constraints_below = 0;  // constraints ending here or below (fairseq's num_constraints)
    std::vector<int> children;  // node indices, in the order first added
  };
  int child(int node, int64_t token) const;  // -1 when none
  void add_to_trie(const std::vector<int64_t>& constraint);

  ConstraintOrder order_;
  int64_t distinct_tokens_ = 0;
  // ordered: the constraints one after the other, and whether each token ends one
  std::vector<int64_t> sequence_;
  std::vector<bool> ends_constraint_;
  // unordered: the trie, node 0 its root (alone when ordered)
  std::vector<Node> trie_;
};

// One hypothesis's progress; a value (copied as hypotheses are extended).
class ConstraintState {
 public:
  // The state before any token.
  explicit ConstraintState(std::shared_ptr<const ConstraintSet> set);

  // The state after `token`.
  ConstraintState advance(int64_t token) const;
  // The tokens that would make progress, ascending (fairseq adds them to the beam's candidates).
  std::vector<int64_t> next_tokens() const;
  // Constraint tokens met so far.
  int64_t bank() const;
  // Whether every constraint is met: only then may the hypothesis end.
  bool finished() const;
  const ConstraintSet& set() const { return *set_; }

 private:
  int completed_count() const;
  void rewind_into(ConstraintState& next) const;

  std::shared_ptr<const ConstraintSet> set_;
  int64_t position_ = -1;                   // ordered: the index in the sequence of the last token met (-1: none)
  int node_ = 0;                            // unordered: the trie node reached
  std::vector<int> generated_, completed_;  // unordered: per node, times entered / constraints completed there
};

}  // namespace attn::nn
