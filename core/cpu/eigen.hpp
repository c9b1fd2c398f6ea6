// Eigen's core, for the files whose loops are Eigen expressions. Include this, never
// <Eigen/Core> directly; a file that needs another Eigen module includes it after this one.
//
// Why: GCC 12.2, Debian 12's compiler, reports "'__Y' may be used uninitialized" inside its
// own AVX-512 intrinsics (the deliberately undefined lanes of _mm512_undefined_*()) wherever
// Eigen's packet code inlines them: GCC bug 105593, fixed in 12.3. With -march=native on an
// AVX-512 CPU that was ~580 false warnings in a clean build, enough to hide a real one. The
// intrinsics header is read here first, with the two warnings silenced for its own lines
// only; the project's code keeps them.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#include <Eigen/Core>
