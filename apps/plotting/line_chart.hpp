// Line charts of training runs (`attnlab plot`, the demo's report): a grid of panels, one per
// metric, each with its own axes (ticks at 1-2-5 steps; optionally a log-scale y axis), one
// coloured line per series and a shared legend of the series' labels.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/plotting/canvas.hpp"

namespace attn::plot {

struct Series {
  std::string label;          // legend entry (series with equal labels share a colour)
  std::vector<double> x, y;   // points, x ascending
  bool points_only = false;        // drawn as squares on the points, not a line (validation)
};

struct Panel {
  std::string title, x_label;
  bool log_y = false;  // positive values only (others are left out)
  std::vector<Series> series;
};

// Panels laid out `columns` to a row, each `panel_width` × `panel_height` px.
std::unique_ptr<Canvas> draw_line_charts(const std::vector<Panel>& panels, int columns = 2, int panel_width = 460,
                                         int panel_height = 300);

// The range an axis shows for values in [low, high]: the same, or for a constant value v a
// span of ±5% of |v| around it (±0.5 around 0), so that its ticks read v (a fixed learning
// rate of 0.001 on v ± 0.5 reads as 0, with negative ticks).
std::pair<double, double> axis_range(double low, double high);

// Tick positions for an axis over [low, high]: about `count` values at a 1, 2 or 5 × 10^k step.
std::vector<double> nice_ticks(double low, double high, int count = 5);

// A tick's label: whole numbers in full (14000, not 1.4e+04: tokens/s, updates, a perplexity
// axis), others to 4 significant digits.
std::string tick_label(double v);

}  // namespace attn::plot
