// Lexical constraint states (nn/search/lexical_constraints.hpp, docs/models.md §1.10.6): step by
// step against the banks, ends and next tokens fairseq's OrderedConstraintState and
// UnorderedConstraintState give for the same constraints and tokens (printed by fairseq 3d262bb's
// token_generation_constraints.py), including their quirks: an ordered constraint broken half-way
// starts over from the first one; an unordered trie shares prefixes and counts a constraint
// that ends where another continues only when the path is left.
#include <catch.hpp>

#include <memory>
#include <vector>

#include "core/error.hpp"
#include "nn/search/lexical_constraints.hpp"

using namespace attn;
using nn::ConstraintOrder;
using nn::ConstraintSet;
using nn::ConstraintState;

namespace {

struct Expected {
  int64_t token, bank;
  bool finished;
  std::vector<int64_t> next;
};

void check_trace(const nn::Constraints& constraints, ConstraintOrder order, const std::vector<int64_t>& first_next,
                 const std::vector<Expected>& steps) {
  ConstraintState state(std::make_shared<const ConstraintSet>(constraints, order));
  CHECK(state.bank() == 0);
  CHECK_FALSE(state.finished());
  CHECK(state.next_tokens() == first_next);
  for (const Expected& e : steps) {
    INFO("after token " << e.token);
    state = state.advance(e.token);
    CHECK(state.bank() == e.bank);
    CHECK(state.finished() == e.finished);
    CHECK(state.next_tokens() == e.next);
  }
}

}  // namespace

TEST_CASE("ordered constraints: in order, anything between them, a broken one starts over from the first") {
  const nn::Constraints constraints = {{5, 6}, {7}, {5, 8}};
  check_trace(constraints, ConstraintOrder::ordered, {5},
              {{5, 1, false, {6}},
               {6, 2, false, {5, 7}},
               {9, 2, false, {5, 7}},
               {7, 3, false, {5}},
               {5, 4, false, {5, 8}},
               {9, 0, false, {5}},  // [5 8] broken: back before the first constraint
               {5, 1, false, {6}},
               {8, 0, false, {5}},
               {9, 0, false, {5}}});
  check_trace(constraints, ConstraintOrder::ordered, {5},
              {{5, 1, false, {6}},
               {9, 0, false, {5}},
               {7, 0, false, {5}},
               {5, 1, false, {6}},
               {6, 2, false, {5, 7}},
               {5, 2, false, {5, 7}},
               {7, 3, false, {5}},
               {5, 4, false, {5, 8}},
               {8, 5, true, {5}}});
}

TEST_CASE("unordered constraints: a trie of shared prefixes, each constraint met once in any order") {
  const nn::Constraints constraints = {{5, 6}, {5}, {5, 6, 7}, {8}};
  check_trace(constraints, ConstraintOrder::unordered, {5, 8},
              {{5, 1, false, {5, 6, 8}},
               {6, 2, false, {5, 7, 8}},
               {9, 2, false, {5, 8}},  // leaving the trie completes [5 6]
               {5, 3, false, {5, 6, 8}},
               {6, 4, false, {5, 7, 8}},
               {7, 5, false, {5, 8}},
               {8, 6, false, {5, 8}},
               {5, 7, true, {5, 6, 8}}});
  check_trace(constraints, ConstraintOrder::unordered, {5, 8},
              {{8, 1, false, {5, 8}},
               {8, 1, false, {5, 8}},  // [8] is met once: a second 8 counts for nothing
               {5, 2, false, {5, 6, 8}},
               {5, 3, false, {5, 6, 8}},
               {6, 4, false, {5, 7, 8}},
               {9, 4, false, {5, 8}},
               {5, 5, false, {5, 6, 8}},
               {6, 6, false, {5, 7, 8}},
               {7, 7, true, {5, 8}}});
}

TEST_CASE("no constraints are met from the start; an empty constraint is refused") {
  for (ConstraintOrder order : {ConstraintOrder::ordered, ConstraintOrder::unordered}) {
    ConstraintState state(std::make_shared<const ConstraintSet>(nn::Constraints{}, order));
    CHECK(state.finished());
    CHECK(state.next_tokens().empty());
    CHECK(state.advance(5).finished());
    CHECK_THROWS_WITH(ConstraintSet({{5}, {}}, order), Catch::Contains("constraint 2 is empty"));
  }
  CHECK(ConstraintSet({{5, 6}, {6, 5, 5}}, ConstraintOrder::ordered).distinct_tokens() == 2);
}
