// A lightweight, opt-in timing facility for finding where a training step spends its time
// (bench/bench_step_profile.cpp). Off by default; when off, a ProfileScope is one relaxed
// atomic load and records nothing.
//
// When enabled, every kernel call that goes through backend_for() is timed under the name
// of the kernel ("batched_gemm", "softmax", ...; core/profiling_backend.cpp), and code may
// add its own named scopes. Times are wall-clock and inclusive: a scope nested in another
// counts in both. Scopes are meant to be opened on the calling (main) thread; the totals
// are guarded by a mutex, so concurrent scopes are safe but serialise on it.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::profiler {

namespace detail {
inline std::atomic<bool> enabled_flag{false};
inline std::atomic<bool> waits_flag{true};
void add(const char* name, double seconds);
}  // namespace detail

inline bool enabled() { return detail::enabled_flag.load(std::memory_order_relaxed); }
// With wait_for_device (the default) each kernel's scope waits for the kernel to finish, so
// on a GPU it times the kernel; without, it times the host's part of the call (checks,
// allocation, the launch), and a wait for the device shows as "wait for the device" and in
// the copy that reads back to the host.
void set_enabled(bool on, bool wait_for_device = true);
inline bool waits_for_device() { return detail::waits_flag.load(std::memory_order_relaxed); }
void reset();  // forgets every total

struct Entry {
  std::string name;
  int64_t calls = 0;
  double seconds = 0.0;
};
// Every name seen since the last reset(), the most time first.
std::vector<Entry> snapshot();

// Times its own lifetime under `name` (a string literal or other static string).
class ProfileScope {
 public:
  explicit ProfileScope(const char* name) : name_(enabled() ? name : nullptr) {
    if (name_) start_ = std::chrono::steady_clock::now();
  }
  ~ProfileScope() {
    if (name_) detail::add(name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace attn::profiler
