// Optimizer base (docs/models.md §1.7). See optimizer.hpp.
#include "nn/optimizer.hpp"

#include <set>

#include "autograd/autograd.hpp"

namespace attn::nn {

Optimizer::Optimizer(NamedTensors params, std::vector<std::string> slot_names)
    : params_(std::move(params)), slot_names_(std::move(slot_names)) {
  std::set<std::string> seen;
  slots_.reserve(params_.size());
  for (const auto& [name, p] : params_) {
    ATTN_CHECK(seen.insert(name).second, "optimizer: parameter '{}' is listed twice", name);
    ATTN_CHECK(p.defined(), "optimizer: parameter '{}' is undefined", name);
    ATTN_CHECK(p.dtype() == DType::Float32, "optimizer: parameter '{}' is {}; only float32 parameters are trained",
               name, dtype_name(p.dtype()));
    ATTN_CHECK(p.is_contiguous(), "optimizer: parameter '{}' {} is not contiguous", name, p.shape().str());
    std::vector<Tensor> slots;
    for (size_t s = 0; s < slot_names_.size(); ++s) slots.push_back(zeros(p.shape(), DType::Float32, p.device()));
    slots_.push_back(std::move(slots));
  }
}

void Optimizer::step(double grad_scale) {
  std::vector<Tensor> grads;  // kept alive while `with_grad` refers to them
  grads.reserve(params_.size());
  std::vector<ParamData> with_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& [name, p] = params_[i];
    Tensor g = grad(p);
    if (!g.defined()) continue;
    ATTN_CHECK(g.dtype() == DType::Float32 && g.shape() == p.shape() && g.device() == p.device(),
               "{}: gradient of '{}' is {} {} on {} but the parameter is float32 {} on {}", this->name(), name,
               dtype_name(g.dtype()), g.shape().str(), g.device().str(), p.shape().str(), p.device().str());
    grads.push_back(g.contiguous());
    with_grad.push_back(ParamData{.index = i, .param = p, .grad = grads.back(), .slots = slots_[i]});
  }
  update(with_grad, float(grad_scale));
}

void Optimizer::zero_grad() {
  for (const auto& [name, p] : params_) attn::zero_grad(p);
}

std::string optimizer_state_key(const std::string& param_name, const std::string& what) {
  return "state." + param_name + "." + what;
}

std::string Optimizer::state_key(size_t param_index, const std::string& what) const {
  return optimizer_state_key(params_[param_index].first, what);
}

const Tensor& Optimizer::find_state(const std::map<std::string, Tensor>& state, const std::string& key, DType dtype,
                                    const Shape& shape) {
  auto it = state.find(key);
  ATTN_CHECK(it != state.end(), "optimizer state: no entry '{}' (saved by another optimizer or model?)", key);
  const Tensor& t = it->second;
  ATTN_CHECK(t.dtype() == dtype && t.shape() == shape, "optimizer state: '{}' is {} {}, expected {} {}", key,
             dtype_name(t.dtype()), t.shape().str(), dtype_name(dtype), shape.str());
  return t;
}

NamedTensors Optimizer::state_dict() const {
  NamedTensors state;
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t s = 0; s < slot_names_.size(); ++s) state.emplace_back(state_key(i, slot_names_[s]), slots_[i][s]);
  for (auto& entry : extra_state()) state.push_back(std::move(entry));
  return state;
}

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& state) {
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t s = 0; s < slot_names_.size(); ++s)
      find_state(state, state_key(i, slot_names_[s]), DType::Float32, params_[i].second.shape());
  load_extra_state(state);  // the slots are valid, so a throw here leaves nothing half-loaded
  for (size_t i = 0; i < params_.size(); ++i)
    for (size_t s = 0; s < slot_names_.size(); ++s) slots_[i][s].copy_(state.at(state_key(i, slot_names_[s])));
}

}  // namespace attn::nn
