// The one thread pool: OpenMP. OpenBLAS is the OpenMP build (scripts/setup.sh), so GEMMs
// and our own kernels share the same threads instead of two pools spinning against each other.
#pragma once

namespace attn {

void set_num_threads(int n);  // sets OpenMP's and OpenBLAS's thread counts
int get_num_threads();

}  // namespace attn
