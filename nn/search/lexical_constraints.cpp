#include "nn/search/lexical_constraints.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include "core/error.hpp"

namespace attn::nn {

ConstraintSet::ConstraintSet(const Constraints& constraints, ConstraintOrder order) : order_(order), trie_(1) {
  std::set<int64_t> tokens;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const std::vector<int64_t>& constraint = constraints[i];
    ATTN_CHECK(!constraint.empty(), "lexical constraints: constraint {} is empty", i + 1);
    tokens.insert(constraint.begin(), constraint.end());
    if (order == ConstraintOrder::unordered) {
      add_to_trie(constraint);
      continue;
    }
    sequence_.insert(sequence_.end(), constraint.begin(), constraint.end());
    ends_constraint_.insert(ends_constraint_.end(), constraint.size() - 1, false);
    ends_constraint_.push_back(true);
  }
  distinct_tokens_ = int64_t(tokens.size());
}

int ConstraintSet::child(int node, int64_t token) const {
  for (int c : trie_[size_t(node)].children)
    if (trie_[size_t(c)].token == token) return c;
  return -1;
}

void ConstraintSet::add_to_trie(const std::vector<int64_t>& constraint) {
  int node = 0;
  for (int64_t token : constraint) {
    int next = child(node, token);
    if (next < 0) {
      next = int(trie_.size());
      trie_.push_back({token, node, 0, 0, {}});
      trie_[size_t(node)].children.push_back(next);
    }
    node = next;
  }
  trie_[size_t(node)].terminal += 1;
  for (int n = node; n >= 0; n = trie_[size_t(n)].parent) trie_[size_t(n)].constraints_below += 1;
}

ConstraintState::ConstraintState(std::shared_ptr<const ConstraintSet> set)
    : set_(std::move(set)), generated_(set_->trie_.size(), 0), completed_(set_->trie_.size(), 0) {}

ConstraintState ConstraintState::advance(int64_t token) const {
  const ConstraintSet& s = *set_;
  ConstraintState next = *this;
  if (s.order_ == ConstraintOrder::ordered) {
    const size_t following = size_t(position_ + 1);
    if (finished()) return next;
    if (s.sequence_[following] == token)
      next.position_ = position_ + 1;
    else if (position_ >= 0 && s.ends_constraint_[size_t(position_)])
      ;  // between two constraints anything goes
    else
      next.position_ = token == s.sequence_.front() ? 0 : -1;
    return next;
  }
  // Unordered: down the trie while the child's constraints are not all generated already;
  // else back to the root (through its child for `token` when that one is free).
  auto enter = [&](int node) {
    next.node_ = node;
    next.generated_[size_t(node)] += 1;
  };
  const int below = s.child(node_, token);
  if (below >= 0 && generated_[size_t(below)] < s.trie_[size_t(below)].constraints_below) {
    enter(below);
    return next;
  }
  const int from_root = s.child(0, token);
  next.node_ = 0;
  if (from_root >= 0 && generated_[size_t(from_root)] < s.trie_[size_t(from_root)].constraints_below) enter(from_root);
  rewind_into(next);
  return next;
}

// Leaving the trie half-way: walking up from the node reached, the first node where a
// constraint ends that is not yet completed gets completed; the nodes passed on the way no
// longer count as generated.
void ConstraintState::rewind_into(ConstraintState& next) const {
  const ConstraintSet& s = *set_;
  for (int n = node_; n != 0; n = s.trie_[size_t(n)].parent) {
    if (s.trie_[size_t(n)].terminal > completed_[size_t(n)]) {
      next.completed_[size_t(n)] += 1;
      return;
    }
    next.generated_[size_t(n)] -= 1;
  }
}

std::vector<int64_t> ConstraintState::next_tokens() const {
  const ConstraintSet& s = *set_;
  std::set<int64_t> tokens;
  if (s.order_ == ConstraintOrder::ordered) {
    if (position_ > 0) tokens.insert(s.sequence_.front());
    if (!finished()) tokens.insert(s.sequence_[size_t(position_ + 1)]);
  } else {
    for (int node : {0, node_})
      for (int c : s.trie_[size_t(node)].children) tokens.insert(s.trie_[size_t(c)].token);
  }
  return {tokens.begin(), tokens.end()};
}

int64_t ConstraintState::bank() const {
  if (set_->order_ == ConstraintOrder::ordered) return position_ + 1;
  return std::accumulate(generated_.begin(), generated_.end(), int64_t(0));
}

// Constraints completed, counting the one that ends at the node reached (unordered).
int ConstraintState::completed_count() const {
  const int ending_here = set_->trie_[size_t(node_)].terminal > completed_[size_t(node_)] ? 1 : 0;
  return std::accumulate(completed_.begin(), completed_.end(), 0) + ending_here;
}

bool ConstraintState::finished() const {
  const ConstraintSet& s = *set_;
  if (s.order_ == ConstraintOrder::ordered) return position_ + 1 == int64_t(s.sequence_.size());
  return completed_count() == s.trie_.front().constraints_below;
}

}  // namespace attn::nn
