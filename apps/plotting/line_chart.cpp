// Line charts. See line_chart.hpp.
#include "apps/plotting/line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/core.h>

#include "core/error.hpp"

namespace attn::plot {
namespace {

constexpr double kLabelSize = 11, kTitleSize = 13, kLegendRow = 22;

// Distinct colours for the runs (the Tableau 10 palette), each taken with every dash pattern.
constexpr Colour kPalette[] = {{0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173},
                               {0.839, 0.153, 0.157}, {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294},
                               {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498}, {0.737, 0.741, 0.133},
                               {0.090, 0.745, 0.812}};
const std::vector<double> kDashPatterns[] = {{}, {7, 4}, {2, 3}, {7, 3, 2, 3}};  // solid, dashed, dotted, dash-dot
static_assert(kMaxRuns == std::size(kPalette) * std::size(kDashPatterns));

constexpr double kTickTolerance = 1e-9;  // of a step: a tick that rounding put just outside the range

struct Range {
  double low = std::numeric_limits<double>::infinity(), high = -std::numeric_limits<double>::infinity();
  void take(double v) { low = std::min(low, v), high = std::max(high, v); }
  bool empty() const { return !(low <= high); }
};

class PanelPainter {
 public:
  PanelPainter(Canvas& canvas, const Panel& panel, double x0, double y0, double w, double h)
      : canvas_(canvas), panel_(panel), x0_(x0), left_(x0 + 58), top_(y0 + 24), right_(x0 + w - 24),
        bottom_(y0 + h - 40) {
    for (const Series& s : panel.series)
      for (size_t i = 0; i < s.x.size(); ++i)
        if (usable(s.y[i])) xs_.take(s.x[i]), ys_.take(axis_y(s.y[i]));
    canvas_.text((left_ + right_) / 2, y0 + 10, panel.title, kTitleSize, Align::kCentre, kBlack, 0, true);
  }

  void paint(const std::map<std::string, Look>& looks) {
    if (xs_.empty()) {
      canvas_.text((left_ + right_) / 2, (top_ + bottom_) / 2, "no data", kLabelSize, Align::kCentre, kGrey);
      return;
    }
    // A single record, or values equal but for rounding, get a range around them: the point in the middle.
    std::tie(xs_.low, xs_.high) = axis_range(xs_.low, xs_.high);
    std::tie(ys_.low, ys_.high) = axis_range(ys_.low, ys_.high);
    axes();
    for (const Series& s : panel_.series) series(s, looks.at(s.label));
    canvas_.stroke_rect(left_, top_, right_ - left_, bottom_ - top_, kGrey);
  }

 private:
  bool usable(double y) const { return std::isfinite(y) && (!panel_.log_y || y > 0); }
  double axis_y(double y) const { return panel_.log_y ? std::log10(y) : y; }
  double px(double x) const { return left_ + (x - xs_.low) / (xs_.high - xs_.low) * (right_ - left_); }
  double py(double axis_value) const {
    return bottom_ - (axis_value - ys_.low) / (ys_.high - ys_.low) * (bottom_ - top_);
  }

  // The y ticks' values (not their logarithms on a log axis).
  std::vector<double> y_ticks() const {
    if (!panel_.log_y) return nice_ticks(ys_.low, ys_.high);
    return log_ticks(std::pow(10.0, ys_.low), std::pow(10.0, ys_.high));
  }

  void axes() {
    const std::vector<double> x_ticks = nice_ticks(xs_.low, xs_.high), y_values = y_ticks();
    const std::vector<std::string> x_labels = tick_labels(x_ticks), y_labels = tick_labels(y_values);
    // The panel moves right where the y labels need more room than its margin (long labels of
    // a fine range, 4.0000015).
    for (const std::string& label : y_labels)
      left_ = std::max(left_, x0_ + 8 + canvas_.text_width(label, kLabelSize));
    for (size_t i = 0; i < x_ticks.size(); ++i) {
      const double x = px(x_ticks[i]);
      canvas_.line(x, top_, x, bottom_, kLightGrey);
      canvas_.text(x, bottom_ + 10, x_labels[i], kLabelSize, Align::kCentre);
    }
    for (size_t i = 0; i < y_values.size(); ++i) {
      const double y = py(axis_y(y_values[i]));
      canvas_.line(left_, y, right_, y, kLightGrey);
      canvas_.text(left_ - 4, y, y_labels[i], kLabelSize, Align::kEnd);
    }
    canvas_.text((left_ + right_) / 2, bottom_ + 27, panel_.x_label, kLabelSize, Align::kCentre);
  }

  void series(const Series& s, const Look& look) {
    std::vector<double> x, y;
    for (size_t i = 0; i < s.x.size(); ++i)
      if (usable(s.y[i])) x.push_back(px(s.x[i])), y.push_back(py(axis_y(s.y[i])));
    if (s.points_only) {
      for (size_t i = 0; i < x.size(); ++i) canvas_.fill_rect(x[i] - 2.5, y[i] - 2.5, 5, 5, look.colour);
    } else if (x.size() == 1) {
      canvas_.fill_circle(x[0], y[0], 3.5, look.colour);  // a line through one point would hardly show
    } else {
      canvas_.polyline(x.data(), y.data(), x.size(), look.colour, 1.5, look.dashes);
    }
  }

  Canvas& canvas_;
  const Panel& panel_;
  double x0_, left_, top_, right_, bottom_;
  Range xs_, ys_;
};

// The smallest 1, 2 or 5 × 10^k at or above `rough` (> 0).
double nice_step(double rough) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * magnitude >= rough) return m * magnitude;
  return 10 * magnitude;
}

// The multiples of `step` in [low, high], ascending, at most `most`. Each is its index times
// the step, and the indices come from the range's ends: adding the step up instead never
// passes a value whose rounding is coarser than the step (1e17 + 5 == 1e17). Where the
// multiples are that close, rounding makes some equal; those are one tick.
std::vector<double> multiples(double low, double high, double step, int most) {
  const double first = std::ceil(low / step - kTickTolerance), last = std::floor(high / step + kTickTolerance);
  const int count = int(std::clamp(last - first + 1, 0.0, double(most)));
  std::vector<double> ticks;
  for (int k = 0; k < count; ++k) {
    const double t = (first + k) * step;
    if (ticks.empty() || t > ticks.back()) ticks.push_back(std::abs(t) < step * kTickTolerance ? 0.0 : t);
  }
  return ticks;
}

// The series' labels in order of first appearance: one per run.
std::vector<std::string> labels_in_order(const std::vector<Panel>& panels) {
  std::vector<std::string> labels;
  for (const Panel& p : panels)
    for (const Series& s : p.series)
      if (std::find(labels.begin(), labels.end(), s.label) == labels.end()) labels.push_back(s.label);
  return labels;
}

}  // namespace

Look run_look(size_t index) {
  ATTN_CHECK(index < kMaxRuns, "plot: run {} has no look of its own; a figure tells {} runs apart", index + 1,
             kMaxRuns);
  return {kPalette[index % std::size(kPalette)], kDashPatterns[index / std::size(kPalette)]};
}

std::pair<double, double> axis_range(double low, double high) {
  constexpr double kResolution = 1e-12;  // some 4,500 times a double's rounding (2.2e-16 of the value)
  if (high - low > kResolution * std::max(std::abs(low), std::abs(high))) return {low, high};
  const double middle = low / 2 + high / 2, half_span = middle == 0 ? 0.5 : 0.05 * std::abs(middle);
  return {middle - half_span, middle + half_span};
}

std::vector<double> nice_ticks(double low, double high, int count) {
  ATTN_CHECK(low <= high && std::isfinite(high - low) && count > 0, "plot: no axis spans [{}, {}]", low, high);
  if (low == high) return {low};
  return multiples(low, high, nice_step((high - low) / count), count + 1);
}

std::vector<double> log_ticks(double low, double high, int count) {
  ATTN_CHECK(low > 0 && low <= high && std::isfinite(high) && count > 0, "plot: no log axis spans [{}, {}]", low, high);
  const double first_decade = std::floor(std::log10(low)), last_decade = std::ceil(std::log10(high));
  if (last_decade - first_decade > count) {
    const double decades = std::log10(high) - std::log10(low);
    std::vector<double> powers;
    for (double e : multiples(std::log10(low), std::log10(high), std::max(1.0, nice_step(decades / count)), count + 1))
      powers.push_back(std::pow(10.0, e));
    return powers;
  }
  // 1, 2 and 5 times each power of ten in the range, and the powers alone: over at most count + 1 decades.
  std::vector<double> ticks, powers;
  for (double e = first_decade; e <= last_decade; ++e)
    for (double m : {1.0, 2.0, 5.0})
      if (const double t = m * std::pow(10.0, e); low <= t && t <= high) {
        ticks.push_back(t);
        if (m == 1) powers.push_back(t);
      }
  if (ticks.size() > size_t(count) + 1) return powers;
  return ticks.size() >= 2 ? ticks : nice_ticks(low, high, count);
}

std::string tick_label(double v, int digits) {
  if (std::abs(v) < 1e7 && v == std::round(v)) return fmt::format("{:.0f}", v + 0.0);  // + 0.0: no "-0"
  return fmt::format("{:.{}g}", v, digits);
}

std::vector<std::string> tick_labels(const std::vector<double>& ticks) {
  constexpr int kFewestDigits = 4, kMostDigits = 15;  // 15: the digits a double holds exactly
  for (int digits = kFewestDigits;; ++digits) {
    std::vector<std::string> labels;
    for (double t : ticks) labels.push_back(tick_label(t, digits));
    if (digits == kMostDigits || std::adjacent_find(labels.begin(), labels.end()) == labels.end()) return labels;
  }
}

std::unique_ptr<Canvas> draw_line_charts(const std::vector<Panel>& panels, int columns, int panel_width,
                                         int panel_height) {
  ATTN_CHECK(!panels.empty() && columns > 0, "plot: nothing to draw");
  const std::vector<std::string> labels = labels_in_order(panels);
  ATTN_CHECK(labels.size() <= kMaxRuns,
             "plot: {} runs; a figure tells at most {} apart (10 colours, each solid, dashed, dotted and "
             "dash-dotted): plot them in groups",
             labels.size(), kMaxRuns);
  std::map<std::string, Look> looks;
  for (size_t i = 0; i < labels.size(); ++i) looks.emplace(labels[i], run_look(i));
  const bool any_dots = std::ranges::any_of(panels, [](const Panel& p) {
    return std::ranges::any_of(p.series, [](const Series& s) { return s.points_only; });
  });

  const int rows = int((panels.size() + size_t(columns) - 1) / size_t(columns));
  const int used_columns = std::min<int>(columns, int(panels.size()));
  const double legend_h = kLegendRow * double(labels.size()) + 10;
  auto canvas = std::make_unique<Canvas>(used_columns * panel_width, int(legend_h) + rows * panel_height);
  for (size_t i = 0; i < labels.size(); ++i) {
    const double y = 10 + kLegendRow * (double(i) + 0.5);
    const Look& look = looks.at(labels[i]);
    canvas->line(16, y, 44, y, look.colour, 3, look.dashes);
    canvas->text(52, y, labels[i], kLabelSize);
  }
  if (any_dots)
    canvas->text(canvas->width() - 12.0, 10 + kLegendRow / 2, "lines: training · squares: validation", kLabelSize,
                 Align::kEnd, kGrey);
  for (size_t i = 0; i < panels.size(); ++i) {
    const double x0 = double(int(i) % columns * panel_width), y0 = legend_h + double(int(i) / columns * panel_height);
    PanelPainter(*canvas, panels[i], x0, y0, panel_width, panel_height).paint(looks);
  }
  return canvas;
}

}  // namespace attn::plot
