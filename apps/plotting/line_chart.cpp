// Line charts. See line_chart.hpp.
#include "apps/plotting/line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/core.h>

#include "core/error.hpp"

namespace attn::plot {
namespace {

constexpr double kLabelSize = 11, kTitleSize = 13, kLegendRow = 22;

// Distinct colours for the runs (the Tableau 10 palette's first six).
constexpr Colour kPalette[] = {{0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173},
                               {0.839, 0.153, 0.157}, {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}};

struct Range {
  double low = std::numeric_limits<double>::infinity(), high = -std::numeric_limits<double>::infinity();
  void take(double v) { low = std::min(low, v), high = std::max(high, v); }
  bool empty() const { return !(low <= high); }
};

class PanelPainter {
 public:
  PanelPainter(Canvas& canvas, const Panel& panel, double x0, double y0, double w, double h)
      : canvas_(canvas), panel_(panel), left_(x0 + 58), top_(y0 + 24), right_(x0 + w - 24), bottom_(y0 + h - 40) {
    for (const Series& s : panel.series)
      for (size_t i = 0; i < s.x.size(); ++i)
        if (usable(s.y[i])) xs_.take(s.x[i]), ys_.take(axis_y(s.y[i]));
    canvas_.text((left_ + right_) / 2, y0 + 10, panel.title, kTitleSize, Align::kCentre, kBlack, 0, true);
  }

  void paint(const std::map<std::string, Colour>& colours) {
    if (xs_.empty()) {
      canvas_.text((left_ + right_) / 2, (top_ + bottom_) / 2, "no data", kLabelSize, Align::kCentre, kGrey);
      return;
    }
    if (xs_.high == xs_.low) xs_.high = xs_.low + 1;
    std::tie(ys_.low, ys_.high) = axis_range(ys_.low, ys_.high);
    axes();
    for (const Series& s : panel_.series) series(s, colours.at(s.label));
    canvas_.stroke_rect(left_, top_, right_ - left_, bottom_ - top_, kGrey);
  }

 private:
  bool usable(double y) const { return std::isfinite(y) && (!panel_.log_y || y > 0); }
  double axis_y(double y) const { return panel_.log_y ? std::log10(y) : y; }
  double px(double x) const { return left_ + (x - xs_.low) / (xs_.high - xs_.low) * (right_ - left_); }
  double py(double axis_value) const {
    return bottom_ - (axis_value - ys_.low) / (ys_.high - ys_.low) * (bottom_ - top_);
  }

  void axes() {
    for (double t : nice_ticks(xs_.low, xs_.high)) {
      canvas_.line(px(t), top_, px(t), bottom_, kLightGrey);
      canvas_.text(px(t), bottom_ + 10, tick_label(t), kLabelSize, Align::kCentre);
    }
    for (double t : nice_ticks(ys_.low, ys_.high)) {
      canvas_.line(left_, py(t), right_, py(t), kLightGrey);
      canvas_.text(left_ - 4, py(t), tick_label(panel_.log_y ? std::pow(10.0, t) : t), kLabelSize, Align::kEnd);
    }
    canvas_.text((left_ + right_) / 2, bottom_ + 27, panel_.x_label, kLabelSize, Align::kCentre);
  }

  void series(const Series& s, Colour colour) {
    std::vector<double> x, y;
    for (size_t i = 0; i < s.x.size(); ++i)
      if (usable(s.y[i])) x.push_back(px(s.x[i])), y.push_back(py(axis_y(s.y[i])));
    if (!s.points_only) {
      canvas_.polyline(x.data(), y.data(), x.size(), colour);
      return;
    }
    for (size_t i = 0; i < x.size(); ++i) canvas_.fill_rect(x[i] - 2.5, y[i] - 2.5, 5, 5, colour);
  }

  Canvas& canvas_;
  const Panel& panel_;
  double left_, top_, right_, bottom_;
  Range xs_, ys_;
};

}  // namespace

std::pair<double, double> axis_range(double low, double high) {
  if (low != high) return {low, high};
  const double half_span = low == 0 ? 0.5 : 0.05 * std::abs(low);
  return {low - half_span, high + half_span};
}

std::vector<double> nice_ticks(double low, double high, int count) {
  ATTN_CHECK(low <= high && count > 0, "nice_ticks: bad range [{}, {}]", low, high);
  if (low == high) return {low};
  const double rough = (high - low) / count, magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  double step = magnitude;
  for (double m : {2.0, 5.0, 10.0})
    if (step < rough) step = m * magnitude;
  std::vector<double> ticks;
  for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::string tick_label(double v) {
  if (std::abs(v) < 1e7 && v == std::round(v)) return fmt::format("{:.0f}", v + 0.0);  // + 0.0: no "-0"
  return fmt::format("{:.4g}", v);
}

std::unique_ptr<Canvas> draw_line_charts(const std::vector<Panel>& panels, int columns, int panel_width,
                                         int panel_height) {
  ATTN_CHECK(!panels.empty() && columns > 0, "plot: nothing to draw");
  std::map<std::string, Colour> colours;  // one colour per label, in order of appearance
  std::vector<std::string> labels;
  bool any_dots = false;
  for (const Panel& p : panels)
    for (const Series& s : p.series) {
      if (colours.emplace(s.label, kPalette[colours.size() % std::size(kPalette)]).second) labels.push_back(s.label);
      any_dots = any_dots || s.points_only;
    }

  const int rows = int((panels.size() + size_t(columns) - 1) / size_t(columns));
  const int used_columns = std::min<int>(columns, int(panels.size()));
  const double legend_h = kLegendRow * double(labels.size()) + 10;
  auto canvas = std::make_unique<Canvas>(used_columns * panel_width, int(legend_h) + rows * panel_height);
  for (size_t i = 0; i < labels.size(); ++i) {
    const double y = 10 + kLegendRow * (double(i) + 0.5);
    canvas->fill_rect(16, y - 2, 24, 4, colours.at(labels[i]));
    canvas->text(48, y, labels[i], kLabelSize);
  }
  if (any_dots)
    canvas->text(canvas->width() - 12.0, 10 + kLegendRow / 2, "lines: training · squares: validation", kLabelSize,
                 Align::kEnd, kGrey);
  for (size_t i = 0; i < panels.size(); ++i) {
    const double x0 = double(int(i) % columns * panel_width), y0 = legend_h + double(int(i) / columns * panel_height);
    PanelPainter(*canvas, panels[i], x0, y0, panel_width, panel_height).paint(colours);
  }
  return canvas;
}

}  // namespace attn::plot
