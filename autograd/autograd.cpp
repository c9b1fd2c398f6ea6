// The tape: autograd metadata on tensors, grad mode, and recording ops as graph nodes
// (docs/design.md §3). The backward walk itself is in autograd/engine.cpp.
#include "autograd/autograd.hpp"

#include <utility>

namespace attn {
namespace {

thread_local bool grad_mode = true;

// A node whose backward is a closure (what record() and record_multi() build).
class FunctionNode final : public Node {
 public:
  FunctionNode(const char* name, MultiBackwardFn fn) : name_(name), fn_(std::move(fn)) {}
  std::vector<Tensor> apply(const Tensor& grad_output) override { return fn_({grad_output}); }
  std::vector<Tensor> apply_outputs(const std::vector<Tensor>& grad_outputs) override { return fn_(grad_outputs); }
  std::string name() const override { return name_; }
  void release() override {
    fn_ = nullptr;  // drops the saved tensors
    Node::release();
  }

 private:
  std::string name_;
  MultiBackwardFn fn_;
};

Edge edge_to(const Tensor& input) {
  if (!requires_grad(input)) return {};
  return {input.autograd_meta(), input.shape(), input.dtype()};
}

std::shared_ptr<Node> make_node(const char* name, const std::vector<Tensor>& inputs, MultiBackwardFn fn,
                                int num_outputs) {
  auto node = std::make_shared<FunctionNode>(name, std::move(fn));
  node->edges.reserve(inputs.size());
  for (const Tensor& input : inputs) node->edges.push_back(edge_to(input));
  node->num_outputs = num_outputs;
  return node;
}

// Gives `out` fresh metadata saying it is output `index` of `node`.
void attach(Tensor& out, const std::shared_ptr<Node>& node, int index) {
  auto meta = std::make_shared<AutogradMeta>();
  meta->requires_grad = true;
  meta->grad_fn = node;
  meta->output_index = index;
  out.set_autograd_meta(std::move(meta));
}

// An op's result never carries an input's metadata (core may hand back an input's handle).
Tensor without_meta(Tensor t) { return t.autograd_meta() ? t.data_only() : t; }

}  // namespace

Node::~Node() {
  // Take over the producers that only this node's edges keep alive, and destroy them one at
  // a time here, so that freeing a graph of depth n needs no n-deep recursion.
  std::vector<std::shared_ptr<Node>> orphans;
  auto adopt_producers = [&orphans](std::vector<Edge>& edges) {
    for (Edge& edge : edges)
      if (edge.meta && edge.meta.use_count() == 1 && edge.meta->grad_fn) orphans.push_back(std::move(edge.meta->grad_fn));
    edges.clear();
  };
  adopt_producers(edges);
  while (!orphans.empty()) {
    std::shared_ptr<Node> node = std::move(orphans.back());
    orphans.pop_back();
    if (node.use_count() == 1) adopt_producers(node->edges);
  }
}

Tensor& set_requires_grad(Tensor& t, bool enabled) {
  ATTN_CHECK(t.defined(), "set_requires_grad: undefined tensor");
  const auto& meta = t.autograd_meta();
  ATTN_CHECK(!meta || !meta->grad_fn,
             "set_requires_grad: only leaf tensors can change requires_grad; this {} tensor was computed by '{}' "
             "(use detach() to get a leaf)",
             t.shape().str(), meta ? meta->grad_fn->name() : "");
  if (!enabled) {
    if (meta) meta->requires_grad = false;
    return t;
  }
  ATTN_CHECK(is_floating(t.dtype()), "set_requires_grad: only floating tensors can require grad, got {}",
             dtype_name(t.dtype()));
  if (!meta) t.set_autograd_meta(std::make_shared<AutogradMeta>());
  t.autograd_meta()->requires_grad = true;
  return t;
}

bool requires_grad(const Tensor& t) {
  const auto& meta = t.autograd_meta();
  return meta && meta->requires_grad;
}

bool is_leaf(const Tensor& t) {
  const auto& meta = t.autograd_meta();
  return !meta || !meta->grad_fn;
}

Tensor grad(const Tensor& t) {
  const auto& meta = t.autograd_meta();
  return meta ? meta->grad : Tensor();
}

void set_grad(const Tensor& t, const Tensor& g) {
  const auto& meta = t.autograd_meta();
  if (!g.defined()) {
    if (meta) meta->grad = Tensor();
    return;
  }
  ATTN_CHECK(meta && meta->requires_grad, "set_grad: the {} tensor does not require grad", t.shape().str());
  ATTN_CHECK(g.shape() == t.shape(), "set_grad: gradient shape {} does not match tensor shape {}", g.shape().str(),
             t.shape().str());
  ATTN_CHECK(g.dtype() == t.dtype(), "set_grad: gradient dtype {} does not match tensor dtype {}",
             dtype_name(g.dtype()), dtype_name(t.dtype()));
  meta->grad = g.data_only();
}

void zero_grad(const Tensor& t) { set_grad(t, Tensor()); }

Tensor detach(const Tensor& t) { return t.data_only(); }

NoGradGuard::NoGradGuard() : previous_(grad_mode) { grad_mode = false; }
NoGradGuard::~NoGradGuard() { grad_mode = previous_; }
bool grad_mode_enabled() { return grad_mode; }

namespace {
// Tells core's unrecorded Tensor::reshape/view which tensors they must refuse (core/tensor.hpp).
[[maybe_unused]] const bool recording_query_installed = [] {
  set_gradient_recording_query([](const Tensor& t) { return grad_mode && requires_grad(t); });
  return true;
}();
}  // namespace

bool any_requires_grad(const std::vector<Tensor>& inputs) {
  if (!grad_mode) return false;
  for (const Tensor& t : inputs)
    if (requires_grad(t)) return true;
  return false;
}

Tensor record(const char* name, const std::vector<Tensor>& inputs, Tensor out, BackwardFn fn) {
  out = without_meta(std::move(out));
  if (!any_requires_grad(inputs)) return out;
  auto node = make_node(
      name, inputs, [fn = std::move(fn)](const std::vector<Tensor>& grads) { return fn(grads[0]); }, 1);
  attach(out, node, 0);
  return out;
}

std::vector<Tensor> record_multi(const char* name, const std::vector<Tensor>& inputs, std::vector<Tensor> outputs,
                                 MultiBackwardFn fn) {
  for (Tensor& out : outputs) out = without_meta(std::move(out));
  if (!any_requires_grad(inputs)) return outputs;
  auto node = make_node(name, inputs, std::move(fn), int(outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) attach(outputs[i], node, int(i));
  return outputs;
}

}  // namespace attn
