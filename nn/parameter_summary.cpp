// Parameter counts by group. See parameter_summary.hpp.
#include "nn/parameter_summary.hpp"

#include <algorithm>

namespace attn::nn {

std::vector<ParameterGroup> parameter_summary(const Module& model) {
  std::vector<ParameterGroup> groups;
  for (const auto& [name, tensor] : model.named_parameters()) {
    const size_t first = name.find('.');
    const size_t second = first == std::string::npos ? first : name.find('.', first + 1);
    const std::string group = name.substr(0, second);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const ParameterGroup& g) { return g.name == group; });
    if (it == groups.end()) it = groups.insert(groups.end(), ParameterGroup{group, 0});
    it->count += tensor.numel();
  }
  return groups;
}

}  // namespace attn::nn
