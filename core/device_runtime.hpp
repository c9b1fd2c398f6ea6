// How a device library (cuda/) makes itself known: the rest of the program lists devices,
// reports versions and switches a device on by name through this interface, without linking
// against the library. The program's main (or a test's) installs the runtimes it was built
// with; commands then call use_device() with what the user asked for (`--device cuda:1`).
#pragma once
#include <string>

#include "core/device.hpp"

namespace attn {

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  // Why the devices of this runtime cannot be used here (no driver, no device, a driver
  // older than the runtime, ...), in words a user can act on; empty when they can.
  virtual std::string unavailable_reason() const = 0;
  virtual int device_count() const = 0;  // 0 when unusable
  virtual std::string device_name(int index) const = 0;
  // The versions of the runtime and its libraries, e.g. "driver 13.0, runtime 13.0, cuBLAS 13.0.0".
  virtual std::string versions() const = 0;
  // Registers the backend and allocators of every device; called once, by use_device().
  virtual void activate() = 0;
};

// Installs `runtime` for a device type (the program owns it for its whole run).
void install_device_runtime(DeviceType type, DeviceRuntime* runtime);
// The runtime installed for `type`, or null when this program was built without it.
DeviceRuntime* device_runtime(DeviceType type);

// "cpu", "cuda" (= cuda:0) or "cuda:N"; anything else is an error naming the text.
Device parse_device(const std::string& text);
// Makes `device` usable (activating its runtime the first time) or throws attn::Error
// saying why it is not: not built in, not usable here (the runtime's reason), or no such index.
void use_device(Device device);

}  // namespace attn
