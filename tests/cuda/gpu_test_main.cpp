// The main of the tests that need a real GPU (tests/cuda/): where CUDA cannot be used it
// runs nothing and exits with the code ctest reports as "skipped" (tests/CMakeLists.txt),
// printing why; ATTNLAB_REQUIRE_GPU=1 makes that a failure instead (for GPU machines, where
// a silent skip would hide a broken setup).
#define CATCH_CONFIG_RUNNER
#include <catch.hpp>

#include <cstdlib>
#include <string>

#include "cuda/cuda_backend.hpp"
#include "cuda/device_info.hpp"

namespace {
constexpr int kSkipped = 77;  // SKIP_RETURN_CODE in tests/CMakeLists.txt
}

int main(int argc, char** argv) {
  if (!attn::cuda::register_cuda_backend()) {
    const char* require = std::getenv("ATTNLAB_REQUIRE_GPU");
    const bool required = require != nullptr && std::string(require) == "1";
    std::printf("%s: CUDA is not usable here: %s\n", required ? "FAILED (ATTNLAB_REQUIRE_GPU=1)" : "SKIPPED",
                attn::cuda::unavailable_reason().c_str());
    return required ? 1 : kSkipped;
  }
  return Catch::Session().run(argc, argv);
}
