// CPU reductions over any set of dims (keepdim form), arg-max/min along one dim, and
// cumulative sums. Reductions visit the reduced elements of each
// output in a fixed order, so results do not depend on the thread count.
//
// Two loop orders, chosen from the strides: "row" when the reduced elements of one output
// are close together (e.g. summing the last dim): one output at a time, contiguous rows
// reduced by Eigen's vectorized reductions; "column" when neighbouring outputs are close
// together (e.g. summing over the batch dim of [N, D]): a run of outputs is updated at
// once for each reduced position, a unit-stride loop the compiler vectorizes.
// Sums accumulate in double (per block of a row in the row order, see reduce_contiguous).
#include <cmath>
#include <limits>
#include <vector>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/eigen.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// x seen as kept dims (in order, matching the flat index of the contiguous output) and
// reduced dims, each merged where contiguous. Strides in elements.
struct ReduceLayout {
  Shape kept_shape, kept_strides;
  Shape reduced_shape, reduced_strides;
  int64_t outputs = 1, length = 1;
};

ReduceLayout split_dims(const Tensor& x, const std::vector<bool>& reduced) {
  Shape kept_shape, kept_strides, reduced_shape, reduced_strides;
  for (int d = 0; d < x.dim(); ++d) {
    (reduced[d] ? reduced_shape : kept_shape).push_back(x.shape()[d]);
    (reduced[d] ? reduced_strides : kept_strides).push_back(x.strides()[d]);
  }
  const StridedOperands<1> kept = merge_dims<1>(kept_shape, {nullptr}, {kept_strides});
  const StridedOperands<1> red = merge_dims<1>(reduced_shape, {nullptr}, {reduced_strides});
  return {kept.shape, kept.strides[0], red.shape, red.strides[0], kept.shape.numel(), red.shape.numel()};
}

// Element offset of flat index `flat` in a (shape, strides) iteration space.
int64_t offset_of(int64_t flat, const Shape& shape, const Shape& strides) {
  int64_t offset = 0;
  for (int d = shape.size() - 1; d >= 0; --d) {
    offset += (flat % shape[d]) * strides[d];
    flat /= shape[d];
  }
  return offset;
}

// fn(offset) for every index of all dims but the innermost (which fn walks itself).
template <typename Fn>
void for_each_outer(const Shape& shape, const Shape& strides, Fn&& fn) {
  const int nd = shape.size();
  if (shape.numel() == 0) return;
  const int64_t count = shape.numel() / shape[nd - 1];
  Shape index = Shape::filled(nd, 0);
  int64_t offset = 0;
  for (int64_t c = 0; c < count; ++c) {
    fn(offset);
    for (int d = nd - 2; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < shape[d]) break;
      offset -= shape[d] * strides[d];
      index[d] = 0;
    }
  }
}

template <ReduceOp Op>
double reduce_init() {
  if constexpr (Op == ReduceOp::Prod) return 1.0;
  else if constexpr (Op == ReduceOp::Max) return -kInf;
  else if constexpr (Op == ReduceOp::Min) return kInf;
  else return 0.0;
}

// One step of the reduction. For LogSumExp this is the second pass, sum of exp(v - max).
template <ReduceOp Op>
double reduce_step(double acc, double v, double shift) {
  if constexpr (Op == ReduceOp::Prod) return acc * v;
  else if constexpr (Op == ReduceOp::Max) return (v > acc || v != v) ? v : acc;
  else if constexpr (Op == ReduceOp::Min) return (v < acc || v != v) ? v : acc;
  else if constexpr (Op == ReduceOp::Norm2) return acc + v * v;
  else if constexpr (Op == ReduceOp::LogSumExp) return acc + std::exp(v - shift);
  else return acc + v;  // Sum, Mean
}

// Reduces a contiguous run with Eigen's vectorized reductions in T, block by block, adding
// the block results in double: packet speed, and the rounding error of a float sum stays
// that of one block.
template <ReduceOp Op, typename T>
double reduce_contiguous(double acc, const T* p, int64_t n, double shift) {
  constexpr int64_t kBlock = 2048;
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  for (int64_t start = 0; start < n; start += kBlock) {
    const auto v = Eigen::Map<const Array>(p + start, std::min(kBlock, n - start));
    if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Mean) acc += double(v.sum());
    else if constexpr (Op == ReduceOp::Norm2) acc += double(v.square().sum());
    else if constexpr (Op == ReduceOp::LogSumExp) acc += double((v - T(shift)).exp().sum());
    else if constexpr (Op == ReduceOp::Max || Op == ReduceOp::Min) {
      if (v.isNaN().any()) return std::numeric_limits<double>::quiet_NaN();
      acc = reduce_step<Op>(acc, double(Op == ReduceOp::Max ? v.maxCoeff() : v.minCoeff()), 0.0);
    }
  }
  return acc;
}

// Reduces n elements p[0], p[stride], ... into acc.
template <ReduceOp Op, typename T>
double reduce_run(double acc, const T* p, int64_t stride, int64_t n, double shift) {
  if constexpr (std::is_floating_point_v<T> && Op != ReduceOp::Prod)
    if (stride == 1) return reduce_contiguous<Op>(acc, p, n, shift);
  for (int64_t i = 0; i < n; ++i) acc = reduce_step<Op>(acc, double(p[i * stride]), shift);
  return acc;
}

// acc[o] = reduction over the reduced elements of output o, for all outputs.
// `shift` (LogSumExp's per-output maximum) may be null.
template <ReduceOp Op, typename T>
void reduce_pass(const T* x, const ReduceLayout& l, const double* shift, double* acc) {
  const int kept_last = l.kept_shape.size() - 1, red_last = l.reduced_shape.size() - 1;
  const int64_t red_inner = l.reduced_shape[red_last], red_stride = l.reduced_strides[red_last];
  const int64_t kept_inner = l.kept_shape[kept_last], kept_stride = l.kept_strides[kept_last];
  const bool column = kept_inner > 1 && std::abs(kept_stride) < std::abs(red_stride);
  auto shift_of = [shift](int64_t o) { return shift != nullptr ? shift[o] : 0.0; };

  parallel_ranges(l.outputs, [&](int64_t lo, int64_t hi) {
    if (!column) {
      for (int64_t o = lo; o < hi; ++o) {
        const T* base = x + offset_of(o, l.kept_shape, l.kept_strides);
        double a = reduce_init<Op>();
        for_each_outer(l.reduced_shape, l.reduced_strides,
                       [&](int64_t off) { a = reduce_run<Op>(a, base + off, red_stride, red_inner, shift_of(o)); });
        acc[o] = a;
      }
      return;
    }
    for (int64_t o = lo; o < hi;) {  // runs of outputs along the innermost kept dim
      const int64_t n = std::min(kept_inner - o % kept_inner, hi - o);
      const T* base = x + offset_of(o, l.kept_shape, l.kept_strides);
      double* a = acc + o;
      for (int64_t j = 0; j < n; ++j) a[j] = reduce_init<Op>();
      for_each_outer(l.reduced_shape, l.reduced_strides, [&](int64_t off) {
        for (int64_t r = 0; r < red_inner; ++r) {
          const T* p = base + off + r * red_stride;
          if (kept_stride == 1 && shift == nullptr) {
            for (int64_t j = 0; j < n; ++j) a[j] = reduce_step<Op>(a[j], double(p[j]), 0.0);
          } else {
            for (int64_t j = 0; j < n; ++j) a[j] = reduce_step<Op>(a[j], double(p[j * kept_stride]), shift_of(o + j));
          }
        }
      });
      o += n;
    }
  }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, l.length)));
}

template <ReduceOp Op, typename T>
void reduce_typed(const Tensor& x, const ReduceLayout& l, const Tensor& out) {
  const T* xp = x.data<T>();
  std::vector<double> acc(size_t(l.outputs));
  if constexpr (Op == ReduceOp::LogSumExp) {
    std::vector<double> max(size_t(l.outputs));
    reduce_pass<ReduceOp::Max>(xp, l, nullptr, max.data());
    for (double& m : max) m = std::isinf(m) ? 0.0 : m;  // all -inf (or an inf) rows: no shift
    reduce_pass<Op>(xp, l, max.data(), acc.data());
    for (size_t o = 0; o < acc.size(); ++o) acc[o] = max[o] + std::log(acc[o]);
  } else {
    reduce_pass<Op>(xp, l, nullptr, acc.data());
  }
  T* o = out.data<T>();
  for (int64_t i = 0; i < l.outputs; ++i) {
    double v = acc[size_t(i)];
    if constexpr (Op == ReduceOp::Mean) v /= double(l.length);
    if constexpr (Op == ReduceOp::Norm2) v = std::sqrt(v);
    o[i] = static_cast<T>(v);
  }
}

template <typename T>
void reduce_dispatch_op(ReduceOp op, const Tensor& x, const ReduceLayout& l, const Tensor& out) {
  switch (op) {
    case ReduceOp::Sum: return reduce_typed<ReduceOp::Sum, T>(x, l, out);
    case ReduceOp::Mean: return reduce_typed<ReduceOp::Mean, T>(x, l, out);
    case ReduceOp::Max: return reduce_typed<ReduceOp::Max, T>(x, l, out);
    case ReduceOp::Min: return reduce_typed<ReduceOp::Min, T>(x, l, out);
    case ReduceOp::LogSumExp: return reduce_typed<ReduceOp::LogSumExp, T>(x, l, out);
    case ReduceOp::Norm2: return reduce_typed<ReduceOp::Norm2, T>(x, l, out);
    case ReduceOp::Prod: return reduce_typed<ReduceOp::Prod, T>(x, l, out);
  }
}

}  // namespace

void CpuBackend::reduce(ReduceOp op, const Tensor& x, const Tensor& out) {
  std::vector<bool> reduced(size_t(x.dim()));
  for (int d = 0; d < x.dim(); ++d) reduced[d] = out.shape()[d] == 1 && x.shape()[d] != 1;
  const ReduceLayout layout = split_dims(x, reduced);
  dispatch_dtype(x.dtype(), [&](auto tag) { reduce_dispatch_op<decltype(tag)>(op, x, layout, out); });
}

void CpuBackend::arg_reduce(bool is_max, const Tensor& x, int dim, const Tensor& values, const Tensor& indices) {
  std::vector<bool> reduced(size_t(x.dim()), false);
  reduced[dim] = true;
  const ReduceLayout l = split_dims(x, reduced);
  const int64_t n = x.shape()[dim], stride = x.strides()[dim];
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* vp = values.data<T>();
    int64_t* ip = indices.data<int64_t>();
    auto better = [is_max](T v, T best) {
      if constexpr (std::is_floating_point_v<T>)
        if (v != v) return best == best;  // the first NaN wins
      return is_max ? v > best : v < best;  // strict: ties keep the first index
    };
    parallel_ranges(l.outputs, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        const T* p = xp + offset_of(o, l.kept_shape, l.kept_strides);
        T best = p[0];
        int64_t best_index = 0;
        for (int64_t i = 1; i < n; ++i)
          if (better(p[i * stride], best)) best = p[i * stride], best_index = i;
        vp[o] = best;
        ip[o] = best_index;
      }
    }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n)));
  });
}

void CpuBackend::cumsum(const Tensor& x, int dim, bool reverse, const Tensor& out) {
  const Tensor xc = x.contiguous();  // one deliberate copy: the scan below wants [outer, L, inner]
  const int64_t length = x.shape()[dim];
  int64_t inner = 1;
  for (int d = dim + 1; d < x.dim(); ++d) inner *= x.shape()[d];
  const int64_t lines = length == 0 ? 0 : x.numel() / length;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = xc.data<T>();
    T* op = out.data<T>();
    // Lines are numbered outer-major; a run of lines shares `outer` and walks `inner` contiguously.
    parallel_ranges(lines, [&](int64_t lo, int64_t hi) {
      std::vector<double> acc;
      for (int64_t line = lo; line < hi;) {
        const int64_t outer = line / inner, j0 = line % inner, n = std::min(inner - j0, hi - line);
        acc.assign(size_t(n), 0.0);
        for (int64_t step = 0; step < length; ++step) {
          const int64_t l = reverse ? length - 1 - step : step;
          const int64_t base = (outer * length + l) * inner + j0;
          for (int64_t j = 0; j < n; ++j) {
            acc[size_t(j)] += double(xp[base + j]);
            op[base + j] = static_cast<T>(acc[size_t(j)]);
          }
        }
        line += n;
      }
    }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, length)));
  });
}

}  // namespace attn::cpu
