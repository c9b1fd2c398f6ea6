// The kernel interface (core/backend.hpp): the table names every kernel once, a backend
// supports exactly the kernels it overrides, calling one it lacks is a clear error, and
// the CPU backend implements all of them with a stream that needs no waiting.
#include <catch.hpp>

#include <set>
#include <string>

#include "core/backend.hpp"
#include "core/profiler.hpp"
#include "core/profiling_backend.hpp"

using namespace attn;

namespace {

// A backend that implements fill only, as a new device's backend does while it grows.
class FillOnlyBackend final : public BackendBase<FillOnlyBackend> {
 public:
  const char* name() const override { return "fill-only"; }
  Stream stream(Device device) override { return Stream{device}; }
  void synchronize() override { ++synchronized; }
  void fill(const Tensor& out, double value) override { filled_with = value; }

  double filled_with = 0.0;
  int synchronized = 0;
};

Kernel kernel_at(size_t index) { return Kernel(index); }

}  // namespace

TEST_CASE("every kernel of the table has its own name", "[backend]") {
  std::set<std::string> names;
  for (size_t k = 0; k < kKernelCount; ++k) names.insert(kernel_name(kernel_at(k)));
  CHECK(names.size() == kKernelCount);
  CHECK(std::string(kernel_name(Kernel::fill)) == "fill");
  CHECK(std::string(kernel_name(Kernel::label_smoothed_ce)) == "label_smoothed_ce");
}

TEST_CASE("the CPU backend implements every kernel and never has to wait", "[backend]") {
  Backend& cpu = backend_for(Device::cpu());
  CHECK(std::string(cpu.name()) == "cpu");
  for (size_t k = 0; k < kKernelCount; ++k) CHECK(cpu.supports(kernel_at(k)));
  const Stream stream = cpu.stream(Device::cpu());
  CHECK(stream.device == Device::cpu());
  CHECK(stream.native == nullptr);
  cpu.synchronize();
}

TEST_CASE("a backend supports exactly the kernels it overrides", "[backend]") {
  FillOnlyBackend backend;
  CHECK(backend.supports(Kernel::fill));
  for (size_t k = 0; k < kKernelCount; ++k)
    if (kernel_at(k) != Kernel::fill) CHECK_FALSE(backend.supports(kernel_at(k)));
  CHECK_FALSE(FillOnlyBackend::implements_every_kernel());

  const Tensor t = zeros({2});
  backend.fill(t, 3.0);
  CHECK(backend.filled_with == 3.0);
}

TEST_CASE("calling a kernel the backend lacks names the kernel and the backend", "[backend]") {
  FillOnlyBackend backend;
  const Tensor x = ones({2, 3});
  const Tensor out = zeros({2, 3});
  CHECK_THROWS_WITH(backend.softmax(x, out, false),
                    Catch::Contains("fill-only backend has no kernel 'softmax'"));
  CHECK_THROWS_AS(backend.batched_gemm(x, x, out, 1.0, 0.0), Error);
}

TEST_CASE("the profiler's decorator reports the backend it wraps and waits for each kernel", "[backend][profiler]") {
  static FillOnlyBackend inner;  // the decorator keeps a reference for the life of the program
  Backend& profiled = profiling_backend(DeviceType::CUDA, inner);
  CHECK(std::string(profiled.name()) == "fill-only");
  CHECK(profiled.supports(Kernel::fill));
  CHECK_FALSE(profiled.supports(Kernel::softmax));

  const Tensor t = zeros({2});  // allocated before profiling: zeros() fills through the CPU backend
  profiler::reset();
  profiler::set_enabled(true);
  profiled.fill(t, 5.0);
  profiler::set_enabled(false);
  CHECK(inner.filled_with == 5.0);
  CHECK(inner.synchronized == 1);  // the time recorded is the kernel's, not its launch's
  const std::vector<profiler::Entry> entries = profiler::snapshot();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].name == "fill");
  CHECK(entries[0].calls == 1);
  profiler::reset();

  const Tensor x = ones({2, 3});
  CHECK_THROWS_WITH(profiled.softmax(x, x, false), Catch::Contains("fill-only backend has no kernel 'softmax'"));
}
