// Heat maps of attention. See heat_map.hpp.
#include "apps/plotting/heat_map.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "apps/plotting/colour_scale.hpp"
#include "core/error.hpp"

namespace attn::plot {
namespace {

constexpr double kLabelSize = 12, kTitleSize = 14, kMargin = 10, kBarWidth = 14, kMaxGrid = 1400;
// The least distance between two labels' centres: a 12-px line and a little space.
constexpr double kLabelPitch = kLabelSize + 3;
// The ticks that tie a label to its row or column where not every position has one.
constexpr double kTickLength = 4;

double widest(Canvas& measure, const std::vector<std::string>& labels) {
  double w = 0;
  for (const std::string& label : labels) w = std::max(w, measure.text_width(label, kLabelSize));
  return w;
}

std::string scale_number(double v) { return fmt::format("{:.3g}", v); }

// Every how many positions a label goes: the least 1, 2 or 5 × 10^n that spaces labels
// kLabelPitch apart, so that the labelled indices are round numbers.
size_t label_step(double cell) {
  for (double decade = 1;; decade *= 10)
    for (double k : {1, 2, 5})
      if (k * decade * cell >= kLabelPitch) return size_t(k * decade);
}

}  // namespace

std::vector<std::string> axis_labels(const std::vector<std::string>& tokens, double cell) {
  const size_t step = label_step(cell);
  if (step == 1) return tokens;
  std::vector<std::string> labels(tokens.size());
  for (size_t i = 0; i < tokens.size(); i += step) labels[i] = fmt::format("#{} {}", i, tokens[i]);
  return labels;
}

std::unique_ptr<Canvas> draw_heat_map(const HeatMap& map, double cell) {
  const size_t rows = map.row_labels.size(), columns = map.column_labels.size();
  ATTN_CHECK(rows > 0 && columns > 0 && map.values.size() == rows * columns,
             "heat map '{}': {} values for {} rows × {} columns", map.title, map.values.size(), rows, columns);
  cell = std::min(cell, kMaxGrid / double(std::max(rows, columns)));
  double low = 0, high = 0;
  for (double v : map.values) low = std::min(low, v), high = std::max(high, v);
  const bool diverging = low < 0;
  if (diverging) high = std::max(high, -low), low = -high;
  if (high <= low) high = low + 1;
  // The colour of a value, and of a fraction f ∈ [0, 1] of the way from low to high.
  const auto colour_at = [&](double f) { return diverging ? cool_warm(2 * f - 1) : viridis(f); };

  const std::vector<std::string> row_labels = axis_labels(map.row_labels, cell),
                                 column_labels = axis_labels(map.column_labels, cell);
  // Where some positions go unlabelled, a tick shows which one a label belongs to.
  const double tick = label_step(cell) > 1 ? kTickLength : 0;

  Canvas measure(1, 1);
  const double left = kMargin + widest(measure, row_labels) + 6 + tick;
  const double top = kMargin + kTitleSize + 8 + widest(measure, column_labels) + 6 + tick;
  const double grid_w = cell * double(columns), grid_h = cell * double(rows);
  const double bar_x = left + grid_w + 16, bar_h = std::max(grid_h, 120.0);
  const double number_w = std::max(measure.text_width(scale_number(low), kLabelSize),
                                   measure.text_width(scale_number(high), kLabelSize));
  const double width = std::max(bar_x + kBarWidth + 6 + number_w + kMargin,
                                kMargin * 2 + measure.text_width(map.title, kTitleSize, true));
  auto canvas = std::make_unique<Canvas>(int(width), int(top + bar_h + kMargin));

  canvas->text(kMargin, kMargin + kTitleSize / 2, map.title, kTitleSize, Align::kStart, kBlack, 0, true);
  std::vector<Colour> colours;
  colours.reserve(map.values.size());
  for (double v : map.values) colours.push_back(colour_at((v - low) / (high - low)));
  canvas->fill_cells(left, top, cell, rows, columns, colours);
  for (size_t r = 0; r < rows; ++r) {
    if (row_labels[r].empty()) continue;
    const double y = top + cell * (double(r) + 0.5);
    if (tick > 0) canvas->line(left - tick, y, left, y, kGrey);
    canvas->text(left - tick - 6, y, row_labels[r], kLabelSize, Align::kEnd);
  }
  for (size_t c = 0; c < columns; ++c) {  // key labels read upwards, ending at the grid
    if (column_labels[c].empty()) continue;
    const double x = left + cell * (double(c) + 0.5);
    if (tick > 0) canvas->line(x, top - tick, x, top, kGrey);
    canvas->text(x, top - tick - 6, column_labels[c], kLabelSize, Align::kStart, kBlack, 90);
  }
  canvas->stroke_rect(left, top, grid_w, grid_h, kGrey);

  // The colour bar: high at the top, with its ends and middle numbered.
  const int steps = int(bar_h);
  for (int i = 0; i < steps; ++i)
    canvas->fill_rect(bar_x, top + i, kBarWidth, 1.5, colour_at(1.0 - double(i) / double(steps - 1)));
  canvas->stroke_rect(bar_x, top, kBarWidth, bar_h, kGrey);
  for (double f : {0.0, 0.5, 1.0})
    canvas->text(bar_x + kBarWidth + 6, top + bar_h * (1 - f), scale_number(low + f * (high - low)), kLabelSize);
  return canvas;
}

}  // namespace attn::plot
