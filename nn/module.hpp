// Module: a node of the model tree with named parameters and sub-modules, train/eval
// mode, and state_dict() with fairseq-style hierarchical names
// (`encoder.layers.0.self_attn.k_proj.weight`) so checkpoints line up with the reference
// implementations (docs/design.md §4).
//
// Parameters are Tensor handles registered once; loading a state dict copies values into
// them in place, so every handle (optimizer, tied embeddings) stays valid.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.hpp"

namespace attn::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Parameters in registration order, each once (a tied parameter appears under its first name).
  NamedTensors named_parameters(const std::string& prefix = "") const;
  std::vector<Tensor> parameters() const;
  // Parameters and buffers under every name they are registered at (tied ones twice),
  // as fairseq's state_dict does.
  NamedTensors state_dict(const std::string& prefix = "") const;
  // Copies values into the registered tensors; strict: every key must match both ways,
  // shapes must agree (errors name the key and both shapes).
  void load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);
  // Moves every parameter and buffer, with the gradients they hold, to `device`, in place:
  // handles taken earlier (an optimizer's, a tied weight's) follow, as relocate() moves the
  // storage itself. Buffers registered as host-resident stay where they are.
  void to(Device device);
  // Where the parameters live (the CPU for a module without parameters).
  Device device() const;
  int64_t num_parameters() const;
  // Parameter counts per direct sub-module (and "(own)" for this module's own parameters).
  std::vector<std::pair<std::string, int64_t>> parameter_counts() const;

 protected:
  // Registers a trainable parameter (set to require grad) and returns the handle.
  Tensor register_parameter(const std::string& name, Tensor value);
  // Registers a non-trainable tensor saved in the state dict (e.g. a positional table).
  // A host-resident buffer is one the module reads and writes on the host (a counter): to()
  // leaves it in host memory, so reading it never waits for a device.
  enum class Residence { WithModel, Host };
  Tensor register_buffer(const std::string& name, Tensor value, Residence residence = Residence::WithModel);
  // An empty name registers the child inline: its parameters and children are named as if
  // they were this module's own (a LightConv layer's conv block: `layers.0.linear1`).
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    children_.emplace_back(name, module);
    return module;
  }
  // Called on each module by train(); override to propagate extra state.
  virtual void on_mode_change() {}

 private:
  bool training_ = true;
  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<const Storage*> host_buffers_;  // storages of the host-resident buffers
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

}  // namespace attn::nn
