// Progress bar / progress lines. See progress.hpp.
#include "apps/cli/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <system_error>

#include <fmt/core.h>

namespace attn::app {
namespace {
constexpr int kBarWidth = 24;
}

void flush_now(std::FILE* out) {
  if (std::fflush(out) != 0) throw std::system_error(errno, std::generic_category(), "cannot write to file");
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

ProgressDisplay::~ProgressDisplay() {
  try {
    finish();
  } catch (const std::system_error&) {
    // Not thrown out of a destructor; the stream keeps its error for the command's final check.
  }
  if (copy_) std::fclose(copy_);
}

void ProgressDisplay::copy_lines_to(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (!file) throw std::system_error(errno, std::generic_category(), fmt::format("cannot open the log file {}", path));
  if (copy_) std::fclose(copy_);
  copy_ = file;
}

bool ProgressDisplay::is_terminal(std::FILE* out) { return ::isatty(::fileno(out)) == 1; }

void ProgressDisplay::update(double fraction, const std::string& status) {
  if (!live_) return;
  fraction = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0);
  const int filled = int(fraction * kBarWidth);
  fmt::print(out_, "\r\033[K[{}{}] {:3.0f}% | {}", std::string(size_t(filled), '#'),
             std::string(size_t(kBarWidth - filled), '.'), 100.0 * fraction, status);
  flush_now(out_);
  bar_drawn_ = true;
}

void ProgressDisplay::line(const std::string& text) {
  if (bar_drawn_) fmt::print(out_, "\r\033[K");
  fmt::print(out_, "{}\n", text);
  flush_now(out_);
  bar_drawn_ = false;
  if (copy_) {
    fmt::print(copy_, "{}\n", text);
    flush_now(copy_);
  }
}

void ProgressDisplay::finish() {
  if (!bar_drawn_) return;
  fmt::print(out_, "\n");
  flush_now(out_);
  bar_drawn_ = false;
}

}  // namespace attn::app
