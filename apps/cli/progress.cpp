// Progress bar / progress lines. See progress.hpp.
#include "apps/cli/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

namespace attn::app {
namespace {
constexpr int kBarWidth = 24;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  const auto total = int64_t(std::llround(seconds));
  return fmt::format("{}:{:02d}:{:02d}", total / 3600, (total / 60) % 60, total % 60);
}

std::string format_eta(double elapsed, double fraction) {
  if (!(fraction > 0.0)) return "-";
  return format_duration(elapsed * (1.0 - std::min(fraction, 1.0)) / fraction);
}

ProgressDisplay::ProgressDisplay(std::FILE* out, bool live) : out_(out), live_(live) {}

ProgressDisplay::~ProgressDisplay() { finish(); }

bool ProgressDisplay::is_terminal(std::FILE* out) { return ::isatty(::fileno(out)) == 1; }

void ProgressDisplay::update(double fraction, const std::string& status) {
  if (!live_) return;
  fraction = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0);
  const int filled = int(fraction * kBarWidth);
  fmt::print(out_, "\r\033[K[{}{}] {:3.0f}% | {}", std::string(size_t(filled), '#'),
             std::string(size_t(kBarWidth - filled), '.'), 100.0 * fraction, status);
  std::fflush(out_);
  bar_drawn_ = true;
}

void ProgressDisplay::line(const std::string& text) {
  if (bar_drawn_) fmt::print(out_, "\r\033[K");
  fmt::print(out_, "{}\n", text);
  std::fflush(out_);
  bar_drawn_ = false;
}

void ProgressDisplay::finish() {
  if (!bar_drawn_) return;
  fmt::print(out_, "\n");
  std::fflush(out_);
  bar_drawn_ = false;
}

}  // namespace attn::app
