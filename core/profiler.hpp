// A lightweight, opt-in timing facility for finding where a training step spends its time
// (bench/bench_step_profile.cpp). Off by default; when off, a ProfileScope is one relaxed
// atomic load and records nothing.
//
// When enabled, every kernel call that goes through backend_for() is timed under the name
// of the kernel ("batched_gemm", "softmax", ...; core/profiling_backend.cpp), and code may
// add its own named scopes. Times are wall-clock and inclusive: a scope nested in another
// counts in both. Scopes are meant to be opened on the calling (main) thread; the totals
// are guarded by a mutex, so concurrent scopes are safe but serialise on it.
//
// A device whose kernels run after their call has returned (a GPU) registers a DeviceClock:
// kernels on it are then timed between two time stamps queued on the device around the
// kernel, so the time is the kernel's own on the device, with no launch or wait in it, and
// the host does not wait; the stamps are read when snapshot() is taken.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/device.hpp"

namespace attn::profiler {

// What a kernel's time is. `device`: its run on the device — on the CPU the call itself
// (kernels have finished when they return), on a device with a DeviceClock the span between
// its two time stamps, and elsewhere the call followed by a wait for the device. `host`: the
// host's part of the call only (checks, allocation, the launch); the host's waits for the
// device then show as "wait for the device" and in the copies that read back to the host.
enum class KernelTiming { device, host };

namespace detail {
inline std::atomic<bool> enabled_flag{false};
inline std::atomic<KernelTiming> timing{KernelTiming::device};
void add(const char* name, double seconds);
}  // namespace detail

inline bool enabled() { return detail::enabled_flag.load(std::memory_order_relaxed); }
void set_enabled(bool on, KernelTiming timing = KernelTiming::device);
inline KernelTiming kernel_timing() { return detail::timing.load(std::memory_order_relaxed); }
void reset();  // forgets every total and every time stamp not yet read

// Time stamps queued on a device's work (CUDA events on a GPU: cuda/device_clock.cpp).
class DeviceClock {
 public:
  virtual ~DeviceClock() = default;
  // Queues a stamp behind the work queued so far on the current device's stream; its id.
  virtual int64_t mark() = 0;
  // The seconds between two stamps of one device (waits until the device has passed `to`);
  // negative when the two are on different devices.
  virtual double seconds_between(int64_t from, int64_t to) = 0;
  // Forgets every stamp: their ids may be handed out again.
  virtual void clear() = 0;
};
// The clock of a device type (none, the default: its kernels are timed on the host).
void register_device_clock(DeviceType type, DeviceClock* clock);
DeviceClock* device_clock(DeviceType type);
// Counts a kernel `name` that ran on the device between the stamps `from` and `to` of
// `clock`; the time is read at the next snapshot().
void add_device_span(const char* name, DeviceClock& clock, int64_t from, int64_t to);

struct Entry {
  std::string name;
  int64_t calls = 0;
  double seconds = 0.0;
};
// Every name seen since the last reset(), the most time first (reads the device time
// stamps queued so far, waiting for the devices to pass them).
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
