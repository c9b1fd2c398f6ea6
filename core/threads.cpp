// Thread count for OpenMP and the OpenMP build of OpenBLAS (one shared pool, docs/design.md §2).
#include "core/threads.hpp"

#include <cblas.h>
#include <omp.h>

#include "core/error.hpp"

namespace attn {

void set_num_threads(int n) {
  ATTN_CHECK(n >= 1, "set_num_threads: need at least 1 thread, got {}", n);
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int get_num_threads() { return omp_get_max_threads(); }

}  // namespace attn
