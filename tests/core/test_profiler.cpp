// core/profiler.hpp and the kernel-timing decorator (core/profiling_backend.cpp): off by
// default and recording nothing then; when on, every kernel call is counted under its name.
#include <catch.hpp>

#include <algorithm>

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
