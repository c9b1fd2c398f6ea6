// nn/module: fairseq-style hierarchical names, inline children (registered under an empty
// name, named as the parent's own), tied parameters listed once among the parameters but
// under every name in the state dict, and strict loading.
#include <catch.hpp>

#include "nn/layers/linear.hpp"
#include "nn/module.hpp"

using namespace attn;
using namespace attn::nn;
using Catch::Matchers::Contains;

namespace {

struct Block : Module {
  std::shared_ptr<Linear> linear1 = register_module("linear1", std::make_shared<Linear>(2, 3));
};

struct Layer : Module {
  explicit Layer(std::shared_ptr<Linear> tied) {
    register_module("", std::make_shared<Block>());  // inline: `linear1` is the layer's own
    register_module("fc1", std::make_shared<Linear>(3, 2));
    register_module("tied", std::move(tied));
  }
};

std::vector<std::string> names(const NamedTensors& tensors) {
  std::vector<std::string> out;
  for (const auto& [name, t] : tensors) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("inline children are named as their parent's own; tied tensors listed once as parameters") {
  auto tied = std::make_shared<Linear>(1, 1, false);
  struct Model : Module {
    explicit Model(const std::shared_ptr<Linear>& tied) {
      register_module("layers.0", std::make_shared<Layer>(tied));
      register_module("layers.1", std::make_shared<Layer>(tied));
    }
  } model(tied);
  const std::vector<std::string> state = names(model.state_dict());
  CHECK(state == std::vector<std::string>{"layers.0.linear1.weight", "layers.0.linear1.bias", "layers.0.fc1.weight",
                                          "layers.0.fc1.bias", "layers.0.tied.weight", "layers.1.linear1.weight",
                                          "layers.1.linear1.bias", "layers.1.fc1.weight", "layers.1.fc1.bias",
                                          "layers.1.tied.weight"});
  CHECK(model.named_parameters().size() == 9);  // the tied weight once
  CHECK(model.num_parameters() == 2 * (6 + 3 + 6 + 2) + 1);
}

TEST_CASE("load_state_dict is strict about names and shapes") {
  Layer layer(std::make_shared<Linear>(1, 1, false));
  std::map<std::string, Tensor> state;
  for (const auto& [name, t] : layer.state_dict()) state[name] = t.data_only().clone();
  state["linear1.weight"].fill_(0.5);
  layer.load_state_dict(state);
  CHECK(layer.state_dict().front().second.at({1, 1}) == 0.5);
  state["extra"] = zeros({1});
  CHECK_THROWS_WITH(layer.load_state_dict(state), Contains("unexpected key 'extra'"));
  state.erase("extra");
  state["fc1.bias"] = zeros({5});
  CHECK_THROWS_WITH(layer.load_state_dict(state), Contains("'fc1.bias' has shape"));
}

TEST_CASE("load_state_dict converts float32 <-> float64 but refuses integers where floats belong") {
  Layer layer(std::make_shared<Linear>(1, 1, false));
  std::map<std::string, Tensor> state;
  for (const auto& [name, t] : layer.state_dict()) state[name] = t.data_only().clone();
  state["fc1.bias"] = state["fc1.bias"].to(DType::Float64);
  layer.load_state_dict(state);
  state["fc1.bias"] = state["fc1.bias"].to(DType::Int32);  // e.g. F32 data relabelled I32 in a file
  CHECK_THROWS_WITH(layer.load_state_dict(state), Contains("'fc1.bias' is int32 in the state but float32"));
}
