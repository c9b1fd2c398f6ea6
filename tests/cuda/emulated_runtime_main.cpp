// The main of tests/cuda/'s programs built on the emulated CUDA runtime (attnlab_cuda_emulated,
// cuda/emulator/runtime/): the same tests as on a GPU, against the same backend sources, on the
// emulated device, which every machine has. So they run in the normal suite, and a backend
// that does not register here is a failure, never a skip.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda/cuda_backend.hpp"
#include "cuda/device_info.hpp"
#include "cuda/emulator/emulator.hpp"
#include "catch_session.hpp"

int main(int argc, char** argv) {
  // ATTNLAB_EMULATOR_SCHEDULE=descending runs the backend's kernels in the emulator's other
  // extreme schedule (tests/CMakeLists.txt registers both).
  const char* schedule = std::getenv("ATTNLAB_EMULATOR_SCHEDULE");
  const std::string name = schedule == nullptr ? "ascending" : schedule;
  if (name != "ascending" && name != "descending") {
    std::printf("FAILED: ATTNLAB_EMULATOR_SCHEDULE is '%s'; use ascending or descending\n", name.c_str());
    return 1;
  }
  attn::cuda_emulator::set_backend_schedule(name == "descending" ? attn::cuda_emulator::Schedule::Descending
                                                                  : attn::cuda_emulator::Schedule::Ascending);
  if (!attn::cuda::register_cuda_backend()) {
    std::printf("FAILED: the CUDA backend did not register on the emulated runtime: %s\n",
                attn::cuda::unavailable_reason().c_str());
    return 1;
  }
  std::printf("CUDA backend on the emulated runtime (%s schedule): cuda:0 is the %s\n", name.c_str(),
              attn::cuda::device_name(0).c_str());
  return attn::test::run_catch_session(argc, argv);
}
