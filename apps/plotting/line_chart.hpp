// Line charts of training runs (`attnlab plot`, the demo's report): a grid of panels, one per
// metric, each with its own axes (ticks at 1-2-5 steps; optionally a log-scale y axis), one
// line per series in its run's colour and dash pattern, and a shared legend of the runs' labels.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/plotting/canvas.hpp"

namespace attn::plot {

struct Series {
  std::string label;          // its run's legend entry: a run's series share it, and its look
  std::vector<double> x, y;   // points, x ascending
  bool points_only = false;        // drawn as squares on the points, not a line (validation)
};

struct Panel {
  std::string title, x_label;
  bool log_y = false;  // positive values only (others are left out)
  std::vector<Series> series;
};

// How a run's series are drawn: their colour, and their line's dashes (none: solid).
struct Look {
  Colour colour;
  std::vector<double> dashes;
};

// The most runs a figure tells apart: each its own look (10 colours, each solid, dashed, dotted
// and dash-dotted). A legend of more would outgrow the panels, and looks would repeat.
inline constexpr size_t kMaxRuns = 40;

// The look of the run `index` < kMaxRuns: the colours solid first, then dashed, and so on.
Look run_look(size_t index);

// Panels laid out `columns` to a row, each `panel_width` × `panel_height` px; a line of a
// single point shows as a dot. More than kMaxRuns labels is an error.
std::unique_ptr<Canvas> draw_line_charts(const std::vector<Panel>& panels, int columns = 2, int panel_width = 460,
                                         int panel_height = 300);

// The range an axis shows for values in [low, high]: the same, or for a constant value v a
// span of ±5% of |v| around it (±0.5 around 0), so that its ticks read v (a fixed learning
// rate of 0.001 on v ± 0.5 reads as 0, with negative ticks). Values apart by less than 1e-12
// of their size (a rate computed two ways, 0.0005 and 0.0005000000000000001) count as
// constant: they differ by rounding, and no tick step fits between them.
std::pair<double, double> axis_range(double low, double high);

// Tick positions for an axis over [low, high]: about `count` values at a 1, 2 or 5 × 10^k step,
// at most count + 1, ascending.
std::vector<double> nice_ticks(double low, double high, int count = 5);

// Tick values for a log axis over [low, high] (> 0), never half decades (3162): 1, 2 and 5
// times the powers of ten in it; the powers alone where those would be over count + 1 ticks;
// every 2nd, 5th, 10th... power over more than `count` decades; and nice_ticks' even steps on
// an axis too narrow for two 1-2-5 values (perplexity 30 to 40).
std::vector<double> log_ticks(double low, double high, int count = 5);

// A tick's label: whole numbers in full (14000, not 1.4e+04: tokens/s, updates, a perplexity
// axis), others to `digits` significant digits.
std::string tick_label(double v, int digits = 4);
// The labels of an axis's ticks, with as many significant digits as tell them apart (4 at the
// least, 15 at the most): the ticks of 4.000001 to 4.000002 would all read "4" at 4.
std::vector<std::string> tick_labels(const std::vector<double>& ticks);

}  // namespace attn::plot
