// CPU element-wise kernels: fill, dtype-converting copy, unary ops and their backward,
// broadcast binary ops and where (core/backend.hpp). All run on the strided loop of
// core/cpu/strided_loop.hpp: contiguous operands take a vectorizable unit-stride path,
// broadcast operands arrive as stride-0 views.
#include <cmath>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {

void CpuBackend::fill(const Tensor& out, double value) {
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = static_cast<T>(value);
    map_elements<T>([v]() { return v; }, out, {});
  });
}

void CpuBackend::copy(const Tensor& src, const Tensor& dst) {
  dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
    using Out = decltype(dst_tag);
    dispatch_dtype(src.dtype(), [&](auto src_tag) {
      using In = decltype(src_tag);
      map_elements<Out, In>([](In v) { return static_cast<Out>(v); }, dst, {&src});
    });
  });
}

}  // namespace attn::cpu
