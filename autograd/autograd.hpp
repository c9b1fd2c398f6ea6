// Reverse-mode automatic differentiation, define-by-run (DESIGN.md §3).
//
// A tensor that requires grad carries an AutogradMeta (in core's opaque slot): its .grad
// and, for non-leaves, the Node that produced it. Each differentiable op in
// autograd/ops.hpp computes its output with core kernels and, when grad mode is on and an
// input requires grad, records a Node holding what its backward needs. backward() walks
// the graph in reverse topological order, accumulates into the leaves' .grad, and frees
// the graph.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// Marks a leaf tensor as a parameter/input whose gradient is wanted. Returns t.
Tensor& set_requires_grad(Tensor& t, bool requires = true);
bool requires_grad(const Tensor& t);
bool is_leaf(const Tensor& t);
// The accumulated gradient of a leaf (undefined until a backward reaches it).
Tensor grad(const Tensor& t);
void set_grad(const Tensor& t, const Tensor& g);  // undefined g clears it
void zero_grad(const Tensor& t);                  // clears (sets undefined)
// Backpropagates from `root`; `seed` defaults to 1 for a one-element root and is required otherwise.
void backward(const Tensor& root, const Tensor& seed = Tensor());
// A tensor sharing data with t but cut off from the graph.
Tensor detach(const Tensor& t);

// While alive, ops record nothing (decoding, evaluation, optimizer steps).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
bool grad_mode_enabled();

// A recorded operation. Ops subclass it (or use FunctionNode) and implement apply():
// given the gradient of the output, return the gradients of the inputs (undefined for
// inputs that need none).
struct Node {
  virtual ~Node() = default;
  virtual std::vector<Tensor> apply(const Tensor& grad_output) = 0;
  virtual std::string name() const = 0;
  std::vector<Tensor> inputs;  // the tensors the gradients flow to (same order as apply's result)
};

struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;                      // leaves only
  std::shared_ptr<Node> grad_fn;    // null for leaves
};

// Records `out` as produced by a node whose backward is `fn` over `inputs`, if grad mode
// is on and any input requires grad. Returns out (possibly with autograd metadata added).
// This is how ops (and custom fused layers in nn/) become differentiable:
//   return record("mul", {a, b}, out, [a, b](const Tensor& g) { return std::vector{g * b, g * a}; });
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;
Tensor record(const char* name, const std::vector<Tensor>& inputs, Tensor out, BackwardFn fn);

}  // namespace attn
