// Weights from one model into another by name. See weight_transfer.hpp.
#include "nn/weight_transfer.hpp"

#include <set>

namespace attn::nn {

WeightTransfer transfer_weights(const std::map<std::string, Tensor>& source, Module& target) {
  WeightTransfer report;
  std::vector<std::pair<Tensor, Tensor>> copies;  // (into, from)
  std::set<std::string> target_names;
  std::set<const Storage*> copied_storage;
  for (const auto& [name, tensor] : target.state_dict()) {
    target_names.insert(name);
    auto it = source.find(name);
    if (it == source.end()) {
      report.added.push_back(name);
      continue;
    }
    ATTN_CHECK(it->second.shape() == tensor.shape(),
               "cannot carry '{}' over: it is {} in the source checkpoint but {} in the new model (the widths or "
               "head layouts of the two models differ)",
               name, it->second.shape().str(), tensor.shape().str());
    copies.emplace_back(tensor, it->second);
    report.copied.push_back(name);
    copied_storage.insert(tensor.storage().get());
  }
  for (const auto& [name, parameter] : target.named_parameters())
    if (copied_storage.count(parameter.storage().get())) report.copied_parameters += parameter.numel();
  for (const auto& [name, tensor] : source)
    if (!target_names.count(name)) report.dropped.push_back(name);
  for (auto& [into, from] : copies) into.data_only().copy_(from);
  return report;
}

}  // namespace attn::nn
