// See device_runtime.hpp.
#include "core/device_runtime.hpp"

#include <array>
#include <charconv>
#include <mutex>

#include "core/error.hpp"

namespace attn {
namespace {

struct Installed {
  DeviceRuntime* runtime = nullptr;
  std::once_flag activated;
};

std::array<Installed, 2>& installed() {
  static std::array<Installed, 2> runtimes;  // by DeviceType; the CPU needs none
  return runtimes;
}

}  // namespace

void install_device_runtime(DeviceType type, DeviceRuntime* runtime) { installed()[size_t(type)].runtime = runtime; }

DeviceRuntime* device_runtime(DeviceType type) { return installed()[size_t(type)].runtime; }

Device parse_device(const std::string& text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  if (text.starts_with("cuda:")) {
    const std::string digits = text.substr(5);
    int index = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error == std::errc() && end == digits.data() + digits.size() && index >= 0 && !digits.empty())
      return Device::cuda(index);
  }
  throw Error(fmt::format("device '{}': expected cpu, cuda or cuda:N (N = 0, 1, ...)", text));
}

void use_device(Device device) {
  if (device.is_cpu()) return;
  Installed& entry = installed()[size_t(device.type)];
  DeviceRuntime* runtime = entry.runtime;
  ATTN_CHECK(runtime != nullptr,
             "device {}: this attnlab was built without CUDA (configure with -DATTNLAB_CUDA=ON where the CUDA "
             "toolkit is installed)",
             device.str());
  const std::string problem = runtime->unavailable_reason();
  ATTN_CHECK(problem.empty(), "device {}: CUDA is not usable here: {}", device.str(), problem);
  const int count = runtime->device_count();
  ATTN_CHECK(device.index < count, "device {}: there is no such GPU here ({} device{}: cuda:0{})", device.str(), count,
             count == 1 ? "" : "s", count > 1 ? fmt::format(" to cuda:{}", count - 1) : "");
  std::call_once(entry.activated, [runtime] { runtime->activate(); });
}

}  // namespace attn
