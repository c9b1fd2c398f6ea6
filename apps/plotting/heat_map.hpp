// Attention maps as pictures: a matrix of weights drawn as coloured cells with the query
// tokens down the left, the key tokens along the top (rotated), a title and a colour bar with
// the scale's numbers (docs/design.md §6, `attnlab inspect`).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "apps/plotting/canvas.hpp"

namespace attn::plot {

struct HeatMap {
  std::string title;
  std::vector<std::string> row_labels, column_labels;  // queries, keys
  std::vector<double> values;                            // rows × columns, row-major
};

// Weights ≥ 0 take the viridis scale from 0 to the largest (an all-zero map spans [0, 1]);
// a map with negative weights (implied maps: RFA's sin/cos features, the decay and delta
// rules) takes the cool-warm scale, symmetric about 0 so that white is exactly 0.
// Cells are `cell` px square (smaller when the map would exceed ~1,400 px).
std::unique_ptr<Canvas> draw_heat_map(const HeatMap& map, double cell = 22);

}  // namespace attn::plot
