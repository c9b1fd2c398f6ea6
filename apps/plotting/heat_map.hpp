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
// Cells are `cell` px square (smaller when the map would exceed ~1,400 px); the axes are
// labelled as axis_labels says.
std::unique_ptr<Canvas> draw_heat_map(const HeatMap& map, double cell = 22);

// The labels of an axis of `tokens` whose positions lie `cell` > 0 px apart: every token where a
// label fits in a cell; else only every k-th position (k = 1, 2 or 5 × 10^n, the least that
// keeps labels a line apart) as "#INDEX TOKEN", indices from 0 as in attention.json's arrays,
// and "" for the positions left unlabelled.
std::vector<std::string> axis_labels(const std::vector<std::string>& tokens, double cell);

}  // namespace attn::plot
