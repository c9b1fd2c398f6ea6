// Totals of the opt-in profiler (core/profiler.hpp), keyed by the scope's name pointer's text,
// and the device spans whose time stamps are still to be read.
#include "core/profiler.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <set>

namespace attn::profiler {
namespace {

// A kernel timed by two stamps of a device clock, not read yet.
struct DeviceSpan {
  const char* name;
  DeviceClock* clock;
  int64_t from, to;
};

// Stamps pile up on the device until read: past this many spans they are read at once (a
// wait for the device), so a long profiled run holds a bounded number of them.
constexpr size_t kMaxUnreadSpans = size_t(1) << 14;

struct Totals {
  std::mutex mutex;
  std::map<std::string, Entry, std::less<>> entries;
  std::vector<DeviceSpan> unread;
  std::array<DeviceClock*, 2> clocks{};  // by DeviceType
};

Totals& totals() {
  static Totals* t = new Totals;  // never destroyed: scopes may close during static destruction
  return *t;
}

// The caller holds t.mutex.
void count(Totals& t, const char* name, double seconds) {
  auto it = t.entries.find(std::string_view(name));
  if (it == t.entries.end()) it = t.entries.emplace(name, Entry{name, 0, 0.0}).first;
  ++it->second.calls;
  it->second.seconds += seconds;
}

// Lets `clocks` and the clocks of the unread spans reuse their stamps; forgets the spans.
// The caller holds t.mutex.
void clear_stamps(Totals& t, const std::array<DeviceClock*, 2>& clocks) {
  std::set<DeviceClock*> used(clocks.begin(), clocks.end());
  for (const DeviceSpan& span : t.unread) used.insert(span.clock);
  used.erase(nullptr);
  for (DeviceClock* clock : used) clock->clear();
  t.unread.clear();
}

// Reads every unread span's stamps into the totals, then lets their clocks reuse the stamps.
// A span across two devices has no time and is left out. The caller holds t.mutex.
void read_device_spans(Totals& t) {
  for (const DeviceSpan& span : t.unread) {
    const double seconds = span.clock->seconds_between(span.from, span.to);
    if (seconds >= 0.0) count(t, span.name, seconds);
  }
  clear_stamps(t, {});
}

}  // namespace

namespace detail {

void add(const char* name, double seconds) {
  Totals& t = totals();
  std::lock_guard lock(t.mutex);
  count(t, name, seconds);
}

}  // namespace detail

void set_enabled(bool on, KernelTiming timing) {
  detail::timing.store(timing, std::memory_order_relaxed);
  detail::enabled_flag.store(on, std::memory_order_relaxed);
}

void reset() {
  Totals& t = totals();
  std::lock_guard lock(t.mutex);
  t.entries.clear();
  clear_stamps(t, t.clocks);
}

void register_device_clock(DeviceType type, DeviceClock* clock) {
  Totals& t = totals();
  std::lock_guard lock(t.mutex);
  t.clocks[size_t(type)] = clock;
}

DeviceClock* device_clock(DeviceType type) {
  Totals& t = totals();
  std::lock_guard lock(t.mutex);
  return t.clocks[size_t(type)];
}

void add_device_span(const char* name, DeviceClock& clock, int64_t from, int64_t to) {
  Totals& t = totals();
  std::lock_guard lock(t.mutex);
  t.unread.push_back({name, &clock, from, to});
  if (t.unread.size() >= kMaxUnreadSpans) read_device_spans(t);
}

std::vector<Entry> snapshot() {
  Totals& t = totals();
  std::vector<Entry> out;
  {
    std::lock_guard lock(t.mutex);
    read_device_spans(t);
    for (const auto& [name, entry] : t.entries) out.push_back(entry);
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.seconds > b.seconds; });
  return out;
}

}  // namespace attn::profiler
