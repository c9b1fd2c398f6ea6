// Reverse-mode automatic differentiation, define-by-run (docs/design.md §3).
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
Tensor& set_requires_grad(Tensor& t, bool on = true);
bool requires_grad(const Tensor& t);
bool is_leaf(const Tensor& t);
// The accumulated gradient of a leaf (undefined until a backward reaches it).
Tensor grad(const Tensor& t);
void set_grad(const Tensor& t, const Tensor& g);  // undefined g clears it
void zero_grad(const Tensor& t);                  // clears (sets undefined)
struct AutogradMeta;
// Told, during backward(), that a leaf's gradient is final: every node of the graph that
// could still add to it has run (a leaf reached by several edges, a parameter tied into two
// places, is final after the last). Called once per leaf that received a gradient in this
// backward, with the leaf's metadata (compare with Tensor::autograd_meta() to know which leaf),
// its .grad already accumulated and contiguous; never for a leaf the graph does not reach.
// Data-parallel training starts a gradient bucket's all-reduce from it (apps/training/).
using GradReadyFn = std::function<void(const AutogradMeta& leaf)>;
// Backpropagates from `root`; `seed` defaults to 1 for a one-element root and is required
// otherwise. `on_grad_ready`, when given, is told as each leaf's gradient becomes final.
void backward(const Tensor& root, const Tensor& seed = Tensor(), const GradReadyFn& on_grad_ready = {});
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

// Where a gradient flows: the input's autograd metadata (its .grad, or the Node that made it)
// and its shape and dtype. An edge does not hold the input's data, so recording an op keeps
// alive only what its backward saved, not every input.
struct Edge {
  std::shared_ptr<AutogradMeta> meta;  // null when the input needs no gradient
  Shape shape;
  DType dtype = DType::Float32;
};

// A recorded operation. Ops subclass it (or use record(), which builds a FunctionNode) and
// implement apply(): given the gradient of the output, return the gradients of the inputs
// (undefined for inputs that need none). A returned gradient may have a broadcast shape:
// the engine sums it down to the input's shape (ops::sum_to).
struct Node {
  virtual ~Node();  // iterative: dropping a long unused graph does not recurse down the chain
  virtual std::vector<Tensor> apply(const Tensor& grad_output) = 0;
  // Nodes with several outputs override this; grad_outputs[i] is undefined when no
  // gradient reached output i (at least one is defined).
  virtual std::vector<Tensor> apply_outputs(const std::vector<Tensor>& grad_outputs) { return apply(grad_outputs.at(0)); }
  virtual std::string name() const = 0;
  // Frees what backward needed (saved tensors, edges); called once backward has run.
  virtual void release() { edges.clear(); released = true; }
  std::vector<Edge> edges;  // where the gradients flow (same order as apply's result)
  int num_outputs = 1;
  bool released = false;
};

struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;                      // leaves only
  std::shared_ptr<Node> grad_fn;    // null for leaves
  int output_index = 0;             // which output of grad_fn this tensor is
};

// Records `out` as produced by a node whose backward is `fn` over `inputs`, if grad mode
// is on and any input requires grad. Returns out (possibly with autograd metadata added).
// This is how ops (and custom fused layers in nn/) become differentiable:
//   return record("mul", {a, b}, out, [a, b](const Tensor& g) { return std::vector{g * b, g * a}; });
// The backward may capture inputs and out: record() stores only edges, and the closure is
// freed after backward, so saved tensors live exactly as long as the graph.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;
Tensor record(const char* name, const std::vector<Tensor>& inputs, Tensor out, BackwardFn fn);

// The same for an op with several outputs (split, chunk): fn receives one gradient per
// output, undefined for outputs no gradient reached.
using MultiBackwardFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& grad_outputs)>;
std::vector<Tensor> record_multi(const char* name, const std::vector<Tensor>& inputs, std::vector<Tensor> outputs,
                                 MultiBackwardFn fn);

// True when grad mode is on and some input requires grad: an op's backward will be recorded.
bool any_requires_grad(const std::vector<Tensor>& inputs);

}  // namespace attn
