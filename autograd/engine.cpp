// The backward engine (docs/design.md §3): from the root, count how many recorded consumers
// each reachable node has, then run nodes in reverse topological order (a node runs once
// every consumer has handed it its gradient, Kahn's algorithm). Work is linear in the size
// of the graph; a node's gradient buffer is dropped as soon as the node has run, and the
// node itself is released (closure, saved tensors, edges), which frees the graph.
//
// Gradients reaching the same tensor several times are summed; the first contribution is
// kept without a copy, later ones are added in place when the buffer is ours alone and
// dense, otherwise out of place (a buffer may alias the seed, a saved tensor or another
// gradient). Gradients of a broadcast shape are summed down to the input's shape.
//
// Leaves are counted like nodes: how many edges of the reachable graph lead to each. When
// the last of them has been routed, no node left to run can add to the leaf's gradient: it
// is final, and the caller's GradReadyFn is told (data-parallel training starts reducing it
// while the rest of the graph runs). The count comes from the graph itself, so it holds
// whatever order the leaves were created or the parameters registered in.
#include <unordered_map>
#include <utility>

#include "autograd/autograd.hpp"
#include "core/ops.hpp"

namespace attn {
namespace {

void accumulate(Tensor& slot, Tensor g) {
  if (!slot.defined()) {
    slot = std::move(g);
  } else if (slot.storage().use_count() == 1 && slot.is_contiguous()) {
    ops::add_(slot, g);
  } else {
    slot = ops::add(slot, g);
  }
}

Tensor seed_gradient(const Tensor& root, const Tensor& seed) {
  if (!seed.defined()) {
    ATTN_CHECK(root.numel() == 1,
               "backward: the root has shape {} ({} elements); a seed gradient of that shape is required for a "
               "non-scalar root",
               root.shape().str(), root.numel());
    return ones(root.shape(), root.dtype(), root.device());
  }
  ATTN_CHECK(seed.shape() == root.shape(), "backward: seed shape {} does not match root shape {}", seed.shape().str(),
             root.shape().str());
  return seed.to(root.dtype()).clone();  // the seed may become a leaf's .grad: never alias the caller's tensor
}

struct PendingNode {
  std::shared_ptr<Node> node;
  int consumers_left = 0;
  std::vector<Tensor> grad_outputs;  // one buffer per output
};

struct PendingLeaf {
  int edges_left = 0;
  bool received = false;  // whether a gradient reached it in this backward
};

class GraphTask {
 public:
  GraphTask(const std::shared_ptr<Node>& root, const GradReadyFn& on_grad_ready)
      : root_(root.get()), on_grad_ready_(on_grad_ready) {
    require_alive(*root);
    nodes_[root.get()] = {root, 0, {}};
    count_consumers(root);
  }

  void run(int root_output, Tensor seed) {
    deliver(nodes_.at(root_), root_output, std::move(seed));
    ready_.push_back(root_);
    while (!ready_.empty()) {
      Node* next = ready_.back();
      ready_.pop_back();
      run_node(next);
    }
  }

 private:
  static void require_alive(const Node& node) {
    ATTN_CHECK(!node.released,
               "backward: the graph through '{}' was already freed by a previous backward(); run the forward again "
               "to backpropagate a second time",
               node.name());
  }

  // Iterative DFS (graphs can be deep): counts the recorded consumers of every reachable node
  // and the edges into every reachable leaf.
  void count_consumers(const std::shared_ptr<Node>& root) {
    std::vector<Node*> stack{root.get()};
    while (!stack.empty()) {
      Node* node = stack.back();
      stack.pop_back();
      for (const Edge& edge : node->edges) {
        if (!edge.meta) continue;
        if (!edge.meta->grad_fn) {
          if (edge.meta->requires_grad) ++leaves_[edge.meta.get()].edges_left;
          continue;
        }
        const std::shared_ptr<Node>& child = edge.meta->grad_fn;
        auto [it, inserted] = nodes_.try_emplace(child.get(), PendingNode{child, 0, {}});
        ++it->second.consumers_left;
        if (inserted) {
          require_alive(*child);
          stack.push_back(child.get());
        }
      }
    }
  }

  static void deliver(PendingNode& target, int output, Tensor g) {
    if (target.grad_outputs.empty()) target.grad_outputs.resize(target.node->num_outputs);
    accumulate(target.grad_outputs.at(output), std::move(g));
  }

  void run_node(Node* key) {
    auto entry = nodes_.extract(key);  // drops our buffers once this function returns
    PendingNode& pending = entry.mapped();
    Node& node = *pending.node;
    std::vector<Tensor> input_grads;
    if (!pending.grad_outputs.empty()) input_grads = node.apply_outputs(pending.grad_outputs);
    pending.grad_outputs.clear();
    ATTN_CHECK(input_grads.empty() || input_grads.size() == node.edges.size(),
               "backward: '{}' returned {} gradients for {} inputs", node.name(), input_grads.size(),
               node.edges.size());
    std::vector<Edge> edges = std::move(node.edges);
    node.release();
    for (size_t i = 0; i < edges.size(); ++i) {
      Tensor g = input_grads.empty() ? Tensor() : std::move(input_grads[i]);
      route(node.name(), edges[i], std::move(g));
    }
  }

  void route(const std::string& from, const Edge& edge, Tensor g) {
    if (!edge.meta) return;
    AutogradMeta& meta = *edge.meta;
    if (!meta.requires_grad) return;
    if (g.defined()) g = fit_to_input(from, edge, std::move(g));
    if (meta.grad_fn) {
      PendingNode& target = nodes_.at(meta.grad_fn.get());
      if (g.defined()) deliver(target, meta.output_index, std::move(g));
      if (--target.consumers_left == 0) ready_.push_back(meta.grad_fn.get());
    } else {
      to_leaf(meta, std::move(g));
    }
  }

  void to_leaf(AutogradMeta& leaf, Tensor g) {
    PendingLeaf& pending = leaves_.at(&leaf);
    if (g.defined()) {
      accumulate(leaf.grad, std::move(g));
      pending.received = true;
    }
    if (--pending.edges_left == 0 && pending.received) finish_leaf(leaf);
  }

  // The leaf's gradient is final: made contiguous (a first contribution may be a view of
  // another tensor) and announced.
  void finish_leaf(AutogradMeta& leaf) {
    if (!leaf.grad.is_contiguous()) leaf.grad = leaf.grad.contiguous();
    if (on_grad_ready_) on_grad_ready_(leaf);
  }

  static Tensor fit_to_input(const std::string& from, const Edge& edge, Tensor g) {
    ATTN_CHECK(g.dtype() == edge.dtype, "backward: '{}' returned a {} gradient for a {} input", from,
               dtype_name(g.dtype()), dtype_name(edge.dtype));
    if (g.shape() == edge.shape) return g;
    try {
      return ops::sum_to(g, edge.shape);
    } catch (const Error& e) {
      throw Error(fmt::format("backward: '{}' returned a gradient of shape {} for an input of shape {}: {}", from,
                              g.shape().str(), edge.shape.str(), e.what()));
    }
  }

  Node* root_;
  const GradReadyFn& on_grad_ready_;
  std::unordered_map<Node*, PendingNode> nodes_;
  std::unordered_map<AutogradMeta*, PendingLeaf> leaves_;
  std::vector<Node*> ready_;
};

}  // namespace

void backward(const Tensor& root, const Tensor& seed, const GradReadyFn& on_grad_ready) {
  ATTN_CHECK(root.defined(), "backward: called on an undefined tensor");
  const auto& meta = root.autograd_meta();
  ATTN_CHECK(meta && meta->requires_grad,
             "backward: the {} tensor does not require grad (no input of its computation requires grad, or it was "
             "computed under NoGradGuard)",
             root.shape().str());
  NoGradGuard no_grad;  // backward functions may use differentiable ops: record nothing
  Tensor g = seed_gradient(root, seed);
  if (!meta->grad_fn) {
    accumulate(meta->grad, std::move(g));
    if (on_grad_ready) on_grad_ready(*meta);
    return;
  }
  GraphTask(meta->grad_fn, on_grad_ready).run(meta->output_index, std::move(g));
}

}  // namespace attn
