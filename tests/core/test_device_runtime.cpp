// core/device_runtime.hpp: device names, and the reasons use_device() gives for a device it
// cannot switch on (not built in, not usable here, no such index) — checked with a runtime
// of the test's own that reports what a machine without a GPU or with one GPU would.
#include <catch.hpp>

#include <string>

#include "core/device_runtime.hpp"
#include "core/error.hpp"

using namespace attn;

namespace {

class FakeRuntime final : public DeviceRuntime {
 public:
  std::string problem;
  int devices = 0;
  int activations = 0;
  std::string unavailable_reason() const override { return problem; }
  int device_count() const override { return devices; }
  std::string device_name(int index) const override { return "fake " + std::to_string(index); }
  std::string versions() const override { return "fake 1.0"; }
  void activate() override { ++activations; }
};

}  // namespace

TEST_CASE("device names parse as cpu, cuda and cuda:N, and nothing else", "[device]") {
  CHECK(parse_device("cpu") == Device::cpu());
  CHECK(parse_device("cuda") == Device::cuda(0));
  CHECK(parse_device("cuda:3") == Device::cuda(3));
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:1x", "CUDA", "cuda:0:1", ""})
    CHECK_THROWS_WITH(parse_device(bad), Catch::Contains("expected cpu, cuda or cuda:N"));
}

TEST_CASE("use_device says why a device cannot be used", "[device]") {
  CHECK_NOTHROW(use_device(Device::cpu()));
  DeviceRuntime* built_in = device_runtime(DeviceType::CUDA);  // the test restores what it found
  install_device_runtime(DeviceType::CUDA, nullptr);
  CHECK_THROWS_WITH(use_device(Device::cuda(0)), Catch::Contains("built without CUDA"));

  FakeRuntime runtime;
  install_device_runtime(DeviceType::CUDA, &runtime);
  runtime.problem = "no NVIDIA driver is installed";
  CHECK_THROWS_WITH(use_device(Device::cuda(0)),
                    Catch::Contains("cuda:0: CUDA is not usable here: no NVIDIA driver is installed"));
  runtime.problem.clear();
  runtime.devices = 1;
  CHECK_THROWS_WITH(use_device(Device::cuda(1)), Catch::Contains("no such GPU here (1 device: cuda:0)"));
  runtime.devices = 2;
  CHECK_THROWS_WITH(use_device(Device::cuda(2)), Catch::Contains("(2 devices: cuda:0 to cuda:1)"));
  CHECK(runtime.activations == 0);  // nothing was switched on by a refused request
  install_device_runtime(DeviceType::CUDA, built_in);
}
