// The main of the tests that need a real GPU (tests/cuda/): where CUDA cannot be used it
// runs nothing and exits with the code ctest reports as "skipped" (tests/CMakeLists.txt),
// printing why; ATTNLAB_REQUIRE_GPU=1 makes that a failure instead (for GPU machines, where
// a silent skip would hide a broken setup).
#include "catch_session.hpp"
#include "test_support.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/device_info.hpp"

int main(int argc, char** argv) {
  if (!attn::cuda::register_cuda_backend())
    attn::test::skip_gpu_program("CUDA is not usable here: " + attn::cuda::unavailable_reason());
  return attn::test::run_catch_session(argc, argv);
}
