// core/profiler.hpp and the kernel-timing decorator (core/profiling_backend.cpp): off by
// default and recording nothing then; when on, every kernel call is counted under its name.
#include <catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops.hpp"
#include "core/profiler.hpp"

using namespace attn;

namespace {

const profiler::Entry* find(const std::vector<profiler::Entry>& entries, const std::string& name) {
  auto it = std::find_if(entries.begin(), entries.end(), [&](const profiler::Entry& e) { return e.name == name; });
  return it == entries.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("the profiler records nothing while disabled", "[profiler]") {
  profiler::reset();
  REQUIRE_FALSE(profiler::enabled());
  ops::matmul(ones({4, 4}), ones({4, 4}));
  { profiler::ProfileScope scope("user scope"); }
  CHECK(profiler::snapshot().empty());
}

TEST_CASE("enabled, kernels and scopes are counted by name with their time", "[profiler]") {
  profiler::reset();
  profiler::set_enabled(true);
  const Tensor a = ones({8, 8});
  {
    profiler::ProfileScope scope("two products");
    ops::matmul(a, a);
    ops::matmul(a, a);
  }
  ops::softmax(a, -1);
  profiler::set_enabled(false);
  const std::vector<profiler::Entry> entries = profiler::snapshot();

  const profiler::Entry* gemm = find(entries, "batched_gemm");
  REQUIRE(gemm != nullptr);
  CHECK(gemm->calls == 2);
  const profiler::Entry* softmax = find(entries, "softmax");
  REQUIRE(softmax != nullptr);
  CHECK(softmax->calls == 1);
  const profiler::Entry* scope = find(entries, "two products");
  REQUIRE(scope != nullptr);
  CHECK(scope->calls == 1);
  CHECK(scope->seconds >= gemm->seconds);  // inclusive: the scope contains both products
  for (size_t i = 1; i < entries.size(); ++i) CHECK(entries[i - 1].seconds >= entries[i].seconds);

  profiler::reset();
  CHECK(profiler::snapshot().empty());
}

TEST_CASE("results are the same with the profiler on", "[profiler]") {
  const Tensor a = arange(0, 12, 1, DType::Float32).view({3, 4});
  const Tensor plain = ops::matmul(a, a.transpose(0, 1));
  profiler::set_enabled(true);
  const Tensor profiled = ops::matmul(a, a.transpose(0, 1));
  profiler::set_enabled(false);
  profiler::reset();
  CHECK(profiled.to_vector() == plain.to_vector());
}

namespace {

// Stamps at whole seconds: stamp i was taken at second times[i]; stamps of device 1 from
// `second_device_from` on.
class FakeClock final : public profiler::DeviceClock {
 public:
  std::vector<double> times;
  size_t second_device_from = SIZE_MAX;
  int clears = 0;

  int64_t mark() override {
    times.push_back(double(times.size()) * double(times.size()));
    return int64_t(times.size()) - 1;
  }
  double seconds_between(int64_t from, int64_t to) override {
    if ((size_t(from) >= second_device_from) != (size_t(to) >= second_device_from)) return -1.0;
    return times.at(size_t(to)) - times.at(size_t(from));
  }
  void clear() override {
    times.clear();
    ++clears;
  }
};

}  // namespace

TEST_CASE("device spans are read at the snapshot, their stamps then reused", "[profiler]") {
  profiler::reset();
  FakeClock clock;
  const int64_t a = clock.mark(), b = clock.mark(), c = clock.mark(), d = clock.mark();  // seconds 0 1 4 9
  profiler::add_device_span("kernel", clock, a, b);
  profiler::add_device_span("kernel", clock, c, d);
  const int64_t e = clock.mark();
  clock.second_device_from = size_t(e);
  profiler::add_device_span("across devices", clock, d, e);  // no time: left out
  const int clears_before = clock.clears;
  const std::vector<profiler::Entry> entries = profiler::snapshot();
  const profiler::Entry* kernel = find(entries, "kernel");
  REQUIRE(kernel != nullptr);
  CHECK(kernel->calls == 2);
  CHECK(kernel->seconds == 1.0 + 5.0);
  CHECK(find(entries, "across devices") == nullptr);
  CHECK(clock.clears == clears_before + 1);  // read: its stamps may be handed out again
  CHECK(profiler::snapshot().size() == entries.size());  // read once: a second snapshot adds nothing
  profiler::reset();
  CHECK(profiler::snapshot().empty());
}

TEST_CASE("a registered device clock times that device's kernels, and is cleared once read", "[profiler]") {
  FakeClock clock;
  profiler::register_device_clock(DeviceType::CUDA, &clock);
  CHECK(profiler::device_clock(DeviceType::CUDA) == &clock);
  CHECK(profiler::device_clock(DeviceType::CPU) == nullptr);  // CPU kernels are timed on the host
  profiler::reset();
  const int clears_after_reset = clock.clears;
  const int64_t from = clock.mark(), to = clock.mark();
  profiler::add_device_span("kernel", clock, from, to);
  const std::vector<profiler::Entry> entries = profiler::snapshot();
  const profiler::Entry* kernel = find(entries, "kernel");
  REQUIRE(kernel != nullptr);
  CHECK(kernel->seconds == 1.0);
  CHECK(clock.clears == clears_after_reset + 1);
  CHECK(clock.times.empty());  // stamps handed out again from 0
  profiler::register_device_clock(DeviceType::CUDA, nullptr);
  profiler::reset();
}
