#include "apps/cli/thread_wait_policy.hpp"

#include <unistd.h>

#include <cstdlib>

namespace attn::app {

void choose_thread_wait_policy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (setenv("GOMP_SPINCOUNT", "30000", 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure: carry on with libgomp's default
}

}  // namespace attn::app
