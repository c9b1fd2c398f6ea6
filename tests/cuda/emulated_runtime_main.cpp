// The main of tests/cuda/'s programs built on the emulated CUDA runtime (attnlab_cuda_emulated,
// cuda/emulator/runtime/): the same tests as on a GPU, against the same backend sources, on the
// emulated device, which every machine has. So they run in the normal suite, and a backend
// that does not register here is a failure, never a skip.
#define CATCH_CONFIG_RUNNER
#include <catch.hpp>

#include <cstdio>

#include "cuda/cuda_backend.hpp"
#include "cuda/device_info.hpp"

int main(int argc, char** argv) {
  if (!attn::cuda::register_cuda_backend()) {
    std::printf("FAILED: the CUDA backend did not register on the emulated runtime: %s\n",
                attn::cuda::unavailable_reason().c_str());
    return 1;
  }
  std::printf("CUDA backend on the emulated runtime: cuda:0 is the %s\n", attn::cuda::device_name(0).c_str());
  return Catch::Session().run(argc, argv);
}
