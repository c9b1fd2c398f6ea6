// Parameter counts of a model grouped by where they live (`encoder.layers`,
// `encoder.embed_tokens`, `decoder.output_projection`, ...): each tensor counted once,
// under its first name, so tied embeddings are not counted twice.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.hpp"

namespace attn::nn {

struct ParameterGroup {
  std::string name;  // the first two components of the parameters' names
  int64_t count = 0;
};

// Groups in order of first appearance.
std::vector<ParameterGroup> parameter_summary(const Module& model);

}  // namespace attn::nn
