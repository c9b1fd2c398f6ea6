// backward()'s GradReadyFn (autograd/autograd.hpp, autograd/engine.cpp): told once per leaf
// that receives a gradient, after the last contribution to it (a leaf used twice, a weight
// tied into two places), never for a leaf the graph does not reach or that gets no gradient,
// and backward's results are those of a backward without it.
#include <catch.hpp>

#include <map>

#include "autograd/ops.hpp"
#include "grad_test_util.hpp"

using namespace attn;
using attn::testing::leaf;
using attn::testing::values;

namespace {

// What the callback saw: for each leaf, how often it was told and its gradient then.
struct ReadyLog {
  std::map<const AutogradMeta*, int> calls;
  std::map<const AutogradMeta*, std::vector<double>> grad_when_ready;
  std::vector<const AutogradMeta*> order;

  GradReadyFn callback() {
    return [this](const AutogradMeta& leaf) {
      ++calls[&leaf];
      grad_when_ready[&leaf] = values(leaf.grad);
      order.push_back(&leaf);
    };
  }
  int calls_of(const Tensor& t) const {
    const auto at = calls.find(t.autograd_meta().get());
    return at == calls.end() ? 0 : at->second;
  }
  std::vector<double> grad_of(const Tensor& t) const { return grad_when_ready.at(t.autograd_meta().get()); }
};

// A tiny language model with its embedding tied to the output projection: the embedding
// gets gradients from the lookup (used first) and from the projection (used last).
struct TiedModel {
  Tensor embedding = leaf({5, 3}, 1), hidden = leaf({3, 3}, 2), bias = leaf({3}, 3), unused = leaf({2}, 4);

  Tensor loss() const {
    const Tensor tokens = from_vector<int64_t>({0, 3, 3, 1}, {4});
    const Tensor h = tanh(linear(attn::embedding(this->embedding, tokens), hidden, bias));
    const Tensor logits = matmul(h, transpose(this->embedding, 0, 1));
    return sum(logits * logits) + sum(h * h);  // h used twice too
  }
  std::vector<Tensor> leaves() const { return {embedding, hidden, bias, unused}; }
};

}  // namespace

TEST_CASE("grad ready: once per leaf, after its last contribution, with backward's results unchanged") {
  TiedModel plain, observed;
  backward(plain.loss());
  ReadyLog log;
  backward(observed.loss(), Tensor(), log.callback());
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& p = observed.leaves()[i];
    INFO("leaf " << i);
    CHECK(log.calls_of(p) == 1);
    CHECK(log.grad_of(p) == values(grad(p)));  // nothing was added after the callback
    CHECK(values(grad(p)) == values(grad(plain.leaves()[i])));
  }
  CHECK(log.calls.size() == 3);
  CHECK(log.calls_of(observed.unused) == 0);  // not reached: never told
  CHECK_FALSE(grad(observed.unused).defined());
  // The output projection's inputs come last in the forward, first in the backward: the bias
  // and hidden weight are final before the tied embedding, which the lookup still feeds.
  REQUIRE(log.order.size() == 3);
  CHECK(log.order.back() == observed.embedding.autograd_meta().get());
}

TEST_CASE("grad ready: a leaf used twice by one op is told once, with both contributions") {
  Tensor x = leaf({3}, 5);
  ReadyLog log;
  backward(sum(x * x), Tensor(), log.callback());
  CHECK(log.calls_of(x) == 1);
  const std::vector<double> v = values(x.data_only());
  CHECK(log.grad_of(x) == std::vector<double>{2 * v[0], 2 * v[1], 2 * v[2]});
}

TEST_CASE("grad ready: a leaf whose edges carry no gradient is not told; accumulation is seen") {
  Tensor a = leaf({2}, 6), b = leaf({2}, 7);
  auto first_only = [&] {
    const Tensor out = record("first_only", {a, b}, a.data_only() + b.data_only(),
                              [](const Tensor& g) { return std::vector<Tensor>{g, Tensor()}; });
    return sum(out);
  };
  backward(first_only());
  ReadyLog log;
  backward(first_only(), Tensor(), log.callback());
  CHECK(log.calls_of(a) == 1);
  CHECK(log.calls_of(b) == 0);
  CHECK(log.grad_of(a) == std::vector<double>{2, 2});  // the earlier backward's gradient included
}

TEST_CASE("grad ready: backward from a leaf tells that leaf") {
  Tensor x = leaf({}, 8);
  ReadyLog log;
  backward(x, Tensor(), log.callback());
  CHECK(log.calls_of(x) == 1);
  CHECK(log.grad_of(x) == std::vector<double>{1});
}
