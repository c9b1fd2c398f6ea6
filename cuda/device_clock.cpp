// CUDA events as the profiler's time stamps (cuda/device_clock.hpp).
#include "cuda/device_clock.hpp"

#include <cuda_runtime.h>

#include <vector>

#include "cuda/cuda_backend.hpp"
#include "cuda/kernel_launch.hpp"

namespace attn::cuda {
namespace {

class EventClock final : public profiler::DeviceClock {
 public:
  explicit EventClock(CudaBackend& backend) : backend_(backend) {}

  int64_t mark() override {
    int device = 0;
    check_cuda(int(cudaGetDevice(&device)), "cudaGetDevice");
    if (used_ == stamps_.size()) stamps_.push_back(new_stamp(device));
    Stamp& stamp = stamps_[used_];
    if (stamp.device != device) {  // an event belongs to the device it was made on
      check_cuda(int(cudaEventDestroy(stamp.event)), "cudaEventDestroy");
      stamp = new_stamp(device);
    }
    const Stream stream = backend_.stream(Device::cuda(device));
    check_cuda(int(cudaEventRecord(stamp.event, static_cast<cudaStream_t>(stream.native))), "cudaEventRecord");
    return int64_t(used_++);
  }

  double seconds_between(int64_t from, int64_t to) override {
    const Stamp& start = stamps_.at(size_t(from));
    const Stamp& end = stamps_.at(size_t(to));
    if (start.device != end.device) return -1.0;
    check_cuda(int(cudaEventSynchronize(end.event)), "cudaEventSynchronize");
    float milliseconds = 0.0f;
    check_cuda(int(cudaEventElapsedTime(&milliseconds, start.event, end.event)), "cudaEventElapsedTime");
    return 1e-3 * double(milliseconds);
  }

  void clear() override { used_ = 0; }

 private:
  struct Stamp {
    cudaEvent_t event;
    int device;
  };

  static Stamp new_stamp(int device) {
    Stamp stamp{nullptr, device};
    check_cuda(int(cudaEventCreate(&stamp.event)), "cudaEventCreate");
    return stamp;
  }

  CudaBackend& backend_;
  std::vector<Stamp> stamps_;  // reused after clear(): a profiled step records thousands
  size_t used_ = 0;
};

}  // namespace

profiler::DeviceClock& device_clock(CudaBackend& backend) {
  static EventClock* clock = new EventClock(backend);  // never destroyed, like the backend
  return *clock;
}

}  // namespace attn::cuda
