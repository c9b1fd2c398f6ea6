// Progress display of long-running commands (docs/design.md §6): on a terminal a live bar
// redrawn in place ("[#####.....]  42% | status"), elsewhere (a log file, a pipe) plain
// lines only, so logs stay readable.
#pragma once
#include <cstdio>
#include <string>

namespace attn::app {

// Flushes `out` now (a line a log reader should see at once). A failure throws what a failed
// fmt::print throws, std::system_error with errno, while errno still gives the reason; a flush
// left unchecked loses it, and the failure is noticed only at the command's end.
void flush_now(std::FILE* out);

// "H:MM:SS" (or "-" for a negative or non-finite duration).
std::string format_duration(double seconds);
// Estimated time left when `fraction` of the work took `elapsed` seconds ("-" if unknown).
std::string format_eta(double elapsed, double fraction);

class ProgressDisplay {
 public:
  // live = draw a bar in place (usually: `out` is a terminal).
  ProgressDisplay(std::FILE* out, bool live);
  ~ProgressDisplay();
  static bool is_terminal(std::FILE* out);

  bool live() const { return live_; }
  // Redraws the bar at `fraction` (clamped to [0, 1]) with a status text; no-op when not live.
  void update(double fraction, const std::string& status);
  // Prints a line of its own (above the bar when live).
  void line(const std::string& text);
  // Ends the bar's line (when one is drawn).
  void finish();
  // From now on every line (not the bar) is also appended to the file at path and flushed at
  // once (train --log-file); a file that cannot be opened is an error naming it.
  void copy_lines_to(const std::string& path);

 private:
  std::FILE* out_;
  bool live_;
  bool bar_drawn_ = false;
  std::FILE* copy_ = nullptr;
};

}  // namespace attn::app
