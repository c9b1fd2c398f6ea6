#include "nn/module.hpp"

#include <functional>
#include <set>

namespace attn::nn {

void Module::train(bool on) {
  training_ = on;
  on_mode_change();
  for (auto& [name, child] : children_) child->train(on);
}

// An empty name registers a child inline: its entries appear as the parent's own.
static std::string join_name(const std::string& prefix, const std::string& name) {
  if (name.empty()) return prefix;
  return prefix.empty() ? name : prefix + "." + name;
}

NamedTensors Module::state_dict(const std::string& prefix) const {
  NamedTensors out;
  for (auto& [name, t] : params_) out.emplace_back(join_name(prefix, name), t);
  for (auto& [name, t] : buffers_) out.emplace_back(join_name(prefix, name), t);
  for (auto& [name, child] : children_) {
    NamedTensors sub = child->state_dict(join_name(prefix, name));
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

NamedTensors Module::named_parameters(const std::string& prefix) const {
  NamedTensors all;
  std::function<void(const Module&, const std::string&)> collect = [&](const Module& m, const std::string& p) {
    for (auto& [name, t] : m.params_) all.emplace_back(join_name(p, name), t);
    for (auto& [name, child] : m.children_) collect(*child, join_name(p, name));
  };
  collect(*this, prefix);
  NamedTensors unique;
  std::set<const Storage*> seen;
  for (auto& [name, t] : all)
    if (seen.insert(t.storage().get()).second) unique.emplace_back(name, t);
  return unique;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  NamedTensors mine = state_dict();
  std::set<std::string> used;
  NoGradGuard no_grad;
  for (auto& [name, t] : mine) {
    auto it = state.find(name);
    if (it == state.end()) {
      ATTN_CHECK(!strict, "load_state_dict: missing key '{}'", name);
      continue;
    }
    ATTN_CHECK(it->second.shape() == t.shape(), "load_state_dict: '{}' has shape {} in the state but {} in the model",
               name, it->second.shape().str(), t.shape().str());
    // float32 <-> float64 is a conversion; integers or booleans where floats belong (or the
    // reverse) are a file whose bytes mean something else, never to be reinterpreted.
    ATTN_CHECK(is_floating(it->second.dtype()) == is_floating(t.dtype()),
               "load_state_dict: '{}' is {} in the state but {} in the model", name, dtype_name(it->second.dtype()),
               dtype_name(t.dtype()));
    Tensor target = t.data_only();
    target.copy_(it->second);
    used.insert(name);
  }
  if (strict)
    for (auto& [name, t] : state)
      ATTN_CHECK(used.count(name), "load_state_dict: unexpected key '{}' (not in the model)", name);
}

void Module::to(Device device) {
  std::set<const Storage*> moved;
  std::function<void(const Module&)> keep_host = [&](const Module& m) {
    moved.insert(m.host_buffers_.begin(), m.host_buffers_.end());
    for (auto& [name, child] : m.children_) keep_host(*child);
  };
  keep_host(*this);
  for (auto& [name, t] : state_dict()) {
    if (!moved.insert(t.storage().get()).second) continue;
    relocate(t, device);
    if (const Tensor g = grad(t); g.defined()) relocate(g, device);
  }
}

Device Module::device() const {
  const NamedTensors params = named_parameters();
  return params.empty() ? Device::cpu() : params.front().second.device();
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (auto& [name, t] : named_parameters()) n += t.numel();
  return n;
}

std::vector<std::pair<std::string, int64_t>> Module::parameter_counts() const {
  std::vector<std::pair<std::string, int64_t>> out;
  int64_t own = 0;
  for (auto& [name, t] : params_) own += t.numel();
  if (own) out.emplace_back("(own)", own);
  for (auto& [name, child] : children_) out.emplace_back(name, child->num_parameters());
  return out;
}

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  set_requires_grad(value, true);
  params_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value, Residence residence) {
  buffers_.emplace_back(name, value);
  if (residence == Residence::Host) host_buffers_.push_back(value.storage().get());
  return value;
}

}  // namespace attn::nn
