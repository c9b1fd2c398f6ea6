// Totals of the opt-in profiler (core/profiler.hpp), keyed by the scope's name pointer's text.
#include "core/profiler.hpp"

#include <algorithm>
#include <map>
#include <mutex>

namespace attn::profiler {
namespace {

struct Totals {
  std::mutex mutex;
  std::map<std::string, Entry, std::less<>> entries;
};

Totals& totals() {
  static Totals* t = new Totals;  // never destroyed: scopes may close during static destruction
  return *t;
}

}  // namespace

namespace detail {

void add(const char* name, double seconds) {
  Totals& t = totals();
  std::lock_guard lock(t.mutex);
  auto it = t.entries.find(std::string_view(name));
  if (it == t.entries.end()) it = t.entries.emplace(name, Entry{name, 0, 0.0}).first;
  ++it->second.calls;
  it->second.seconds += seconds;
}

}  // namespace detail

void set_enabled(bool on, bool wait_for_device) {
  detail::waits_flag.store(wait_for_device, std::memory_order_relaxed);
  detail::enabled_flag.store(on, std::memory_order_relaxed);
}

void reset() {
  Totals& t = totals();
  std::lock_guard lock(t.mutex);
  t.entries.clear();
}

std::vector<Entry> snapshot() {
  Totals& t = totals();
  std::vector<Entry> out;
  {
    std::lock_guard lock(t.mutex);
    for (const auto& [name, entry] : t.entries) out.push_back(entry);
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.seconds > b.seconds; });
  return out;
}

}  // namespace attn::profiler
