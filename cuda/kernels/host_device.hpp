// ATTN_HD marks the functions of the plain structs under cuda/kernels/ (band_shape.hpp,
// scan_shape.hpp) that both host code and kernels call: __host__ __device__ for nvcc, nothing
// for the host compiler (the emulator compiles kernels as host code). core/rng.hpp spells it
// the same way.
#pragma once

#ifndef ATTN_HD
#ifdef __CUDACC__
#define ATTN_HD __host__ __device__
#else
#define ATTN_HD
#endif
#endif
