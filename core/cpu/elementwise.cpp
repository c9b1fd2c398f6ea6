// CPU element-wise kernels: fill, dtype-converting copy, unary ops and their backward,
// broadcast binary ops and where (core/backend.hpp). All run on the strided loop of
// core/cpu/strided_loop.hpp: contiguous operands take a vectorizable unit-stride path,
// broadcast operands arrive as stride-0 views. Transcendental unary ops run contiguous
// rows through Eigen's vectorized exp/log/tanh/erf/... (measured several times faster than
// the scalar libm loop on this machine); strided rows use the scalar form.
#include <cmath>
#include <type_traits>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/eigen.hpp"
#include "core/cpu/row_loop.hpp"
#include "core/cpu/strided_loop.hpp"

#include <unsupported/Eigen/SpecialFunctions>  // after core/cpu/eigen.hpp

namespace attn::cpu {

void CpuBackend::fill(const Tensor& out, double value) {
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = static_cast<T>(value);
    map_elements<T>([v]() { return v; }, out, {});
  });
}

namespace {

// Copies a transposed layout (the destination walks its last dim with unit stride, the
// source walks the second-to-last) in 32x32 tiles, so both sides' cache lines are used
// fully instead of one element per source line. Returns false for other layouts.
template <typename Out, typename In>
bool copy_transposed(const Tensor& src, const Tensor& dst) {
  const StridedOperands<2> m = merge_dims<2>(dst.shape(), {nullptr, nullptr}, {dst.strides(), src.strides()});
  const int nd = m.shape.size();
  if (nd < 2 || m.strides[0][nd - 1] != 1 || m.strides[1][nd - 2] != 1 || m.strides[1][nd - 1] == 1) return false;
  constexpr int64_t kTile = 32;
  const int64_t rows = m.shape[nd - 2], cols = m.shape[nd - 1];
  const int64_t dst_row = m.strides[0][nd - 2], src_col = m.strides[1][nd - 1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile, outer = m.shape.numel() / (rows * cols);
  Out* d = dst.data<Out>();
  const In* s = src.data<In>();
  parallel_ranges(outer * row_tiles, [&](int64_t lo, int64_t hi) {
    for (int64_t task = lo; task < hi; ++task) {
      int64_t o = task / row_tiles, dst_off = 0, src_off = 0;
      for (int k = nd - 3; k >= 0; --k) {
        dst_off += (o % m.shape[k]) * m.strides[0][k];
        src_off += (o % m.shape[k]) * m.strides[1][k];
        o /= m.shape[k];
      }
      const int64_t r0 = (task % row_tiles) * kTile, r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile)
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < std::min(cols, c0 + kTile); ++c)
            d[dst_off + r * dst_row + c] = static_cast<Out>(s[src_off + r + c * src_col]);
    }
  }, std::max<int64_t>(1, kParallelGrain / (kTile * cols)));
  return true;
}

}  // namespace

void CpuBackend::copy(const Tensor& src, const Tensor& dst) {
  dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
    using Out = decltype(dst_tag);
    dispatch_dtype(src.dtype(), [&](auto src_tag) {
      using In = decltype(src_tag);
      if (dst.numel() == 0 || copy_transposed<Out, In>(src, dst)) return;
      map_elements<Out, In>([](In v) { return static_cast<Out>(v); }, dst, {&src});
    });
  });
}

namespace {

template <typename T>
T sigmoid_of(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}

// Standard normal CDF and density, for GELU (Hendrycks & Gimpel 2016, exact erf form).
template <typename T>
T normal_cdf(T x) {
  return T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2)));
}
template <typename T>
T normal_pdf(T x) {
  return T(0.5 * M_2_SQRTPI * M_SQRT1_2) * std::exp(T(-0.5) * x * x);
}

template <typename T>
T maximum_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (a != a) return a;  // NaN propagates
  return a > b ? a : b;
}
template <typename T>
T minimum_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (a != a) return a;
  return a < b ? a : b;
}

// Calls f with the C++ type of a dtype that arithmetic kernels accept (all but Bool).
template <typename F>
void dispatch_arithmetic(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Bool: throw Error("element-wise arithmetic is not defined for bool tensors");
  }
}

// out = f(x) with an Eigen array form for contiguous rows and a scalar form for the rest; the
// array form's denormal results set to 0 when asked (Eigen's exp, row_loop.hpp).
template <typename T, typename ScalarFn, typename ArrayFn>
void map_unary(const Tensor& x, const Tensor& out, ScalarFn scalar, ArrayFn array,
               bool flush_denormal_results = false) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  for_each_row<2>(out.shape(), {static_cast<char*>(out.raw_data()), static_cast<char*>(x.raw_data())},
                  {byte_strides(out), byte_strides(x)},
                  [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                    T* o = reinterpret_cast<T*>(p[0]);
                    const T* a = reinterpret_cast<const T*>(p[1]);
                    if (s[0] == int64_t(sizeof(T)) && s[1] == int64_t(sizeof(T))) {
                      Eigen::Map<Array>(o, n) = array(Eigen::Map<const Array>(a, n));
                      if (flush_denormal_results) flush_denormals(o, n);
                    } else {
                      const int64_t so = s[0] / int64_t(sizeof(T)), sa = s[1] / int64_t(sizeof(T));
                      for (int64_t i = 0; i < n; ++i) o[i * so] = scalar(a[i * sa]);
                    }
                  });
}

template <typename T>
void unary_typed(UnaryOp op, const Tensor& x, const Tensor& out, UnaryParams p) {
  const T a = static_cast<T>(p.a), b = static_cast<T>(p.b);
  auto map = [&](auto f) { map_elements<T, T>(f, out, {&x}); };
  switch (op) {
    case UnaryOp::Neg: return map([](T v) { return T(-v); });
    case UnaryOp::Abs: return map([](T v) { return v < T(0) ? T(-v) : v; });
    case UnaryOp::Relu: return map([](T v) { return v > T(0) ? v : T(0); });
    case UnaryOp::Square: return map([](T v) { return T(v * v); });
    case UnaryOp::Clamp: return map([a, b](T v) { return v < a ? a : (v > b ? b : v); });
    case UnaryOp::AddScalar: return map([a](T v) { return T(v + a); });
    case UnaryOp::MulScalar: return map([a](T v) { return T(v * a); });
    case UnaryOp::RSubScalar: return map([a](T v) { return T(a - v); });
    default: break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    auto vec = [&](auto scalar, auto array, bool flush = false) { map_unary<T>(x, out, scalar, array, flush); };
    switch (op) {
      case UnaryOp::Exp:  // Eigen's exp(−∞) is a denormal: flushed to exactly 0 (row_loop.hpp)
        return vec([](T v) { return std::exp(v); }, [](const auto& v) { return v.exp(); }, true);
      case UnaryOp::Log: return vec([](T v) { return std::log(v); }, [](const auto& v) { return v.log(); });
      case UnaryOp::Sqrt: return vec([](T v) { return std::sqrt(v); }, [](const auto& v) { return v.sqrt(); });
      case UnaryOp::Rsqrt: return vec([](T v) { return T(1) / std::sqrt(v); }, [](const auto& v) { return v.rsqrt(); });
      case UnaryOp::Elu:
        return vec([a](T v) { return v > T(0) ? v : a * std::expm1(v); },
                   [a](const auto& v) { return (v > T(0)).select(v, a * v.expm1()); });
      case UnaryOp::Gelu:
        return vec([](T v) { return v * normal_cdf(v); },
                   [](const auto& v) { return T(0.5) * v * (T(1) + (v * T(M_SQRT1_2)).erf()); });
      case UnaryOp::Sigmoid: return vec([](T v) { return sigmoid_of(v); }, [](const auto& v) { return v.logistic(); });
      case UnaryOp::Tanh: return vec([](T v) { return std::tanh(v); }, [](const auto& v) { return v.tanh(); });
      case UnaryOp::Sin: return vec([](T v) { return std::sin(v); }, [](const auto& v) { return v.sin(); });
      case UnaryOp::Cos: return vec([](T v) { return std::cos(v); }, [](const auto& v) { return v.cos(); });
      case UnaryOp::Pow:
        if (p.a == 2.0) return map([](T v) { return v * v; });
        return map([a](T v) { return std::pow(v, a); });
      case UnaryOp::Reciprocal: return map([](T v) { return T(1) / v; });
      case UnaryOp::RDivScalar: return map([a](T v) { return a / v; });
      default: break;
    }
  }
  throw Error(fmt::format("unary op {} is not defined for {}", int(op), dtype_name(x.dtype())));
}

// dx = dy * f'(x), with y = f(x) where that is the cheaper form of the derivative.
template <typename T>
void unary_backward_typed(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& dx, UnaryParams p) {
  const T a = static_cast<T>(p.a), b = static_cast<T>(p.b);
  auto with_x = [&](auto f) { map_elements<T, T, T>(f, dx, {&x, &dy}); };
  auto with_y = [&](auto f) { map_elements<T, T, T>(f, dx, {&y, &dy}); };
  auto with_xy = [&](auto f) { map_elements<T, T, T, T>(f, dx, {&x, &y, &dy}); };
  switch (op) {
    case UnaryOp::Neg: return with_x([](T, T g) { return -g; });
    case UnaryOp::Abs: return with_x([](T v, T g) { return v > T(0) ? g : (v < T(0) ? -g : T(0)); });
    case UnaryOp::Exp: return with_y([](T out, T g) { return g * out; });
    case UnaryOp::Log: return with_x([](T v, T g) { return g / v; });
    case UnaryOp::Sqrt: return with_y([](T out, T g) { return g * T(0.5) / out; });
    case UnaryOp::Rsqrt: return with_y([](T out, T g) { return g * T(-0.5) * out * out * out; });
    case UnaryOp::Relu: return with_x([](T v, T g) { return v > T(0) ? g : T(0); });
    case UnaryOp::Elu: return with_xy([a](T v, T out, T g) { return v > T(0) ? g : g * (out + a); });
    case UnaryOp::Gelu: return with_x([](T v, T g) { return g * (normal_cdf(v) + v * normal_pdf(v)); });
    case UnaryOp::Sigmoid: return with_y([](T out, T g) { return g * out * (T(1) - out); });
    case UnaryOp::Tanh: return with_y([](T out, T g) { return g * (T(1) - out * out); });
    case UnaryOp::Sin: return with_x([](T v, T g) { return g * std::cos(v); });
    case UnaryOp::Cos: return with_x([](T v, T g) { return -g * std::sin(v); });
    case UnaryOp::Pow: return with_x([a](T v, T g) { return g * a * std::pow(v, a - T(1)); });
    case UnaryOp::Clamp: return with_x([a, b](T v, T g) { return v >= a && v <= b ? g : T(0); });
    case UnaryOp::Reciprocal: return with_y([](T out, T g) { return -g * out * out; });
    case UnaryOp::Square: return with_x([](T v, T g) { return T(2) * v * g; });
    case UnaryOp::AddScalar: return with_x([](T, T g) { return g; });
    case UnaryOp::MulScalar: return with_x([a](T, T g) { return g * a; });
    case UnaryOp::RSubScalar: return with_x([](T, T g) { return -g; });
    case UnaryOp::RDivScalar: return with_xy([](T v, T out, T g) { return -g * out / v; });
  }
}

template <typename T>
void binary_typed(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  auto arith = [&](auto f) { map_elements<T, T, T>(f, out, {&a, &b}); };
  auto compare = [&](auto f) { map_elements<bool, T, T>(f, out, {&a, &b}); };
  switch (op) {
    case BinaryOp::Add: return arith([](T x, T y) { return T(x + y); });
    case BinaryOp::Sub: return arith([](T x, T y) { return T(x - y); });
    case BinaryOp::Mul: return arith([](T x, T y) { return T(x * y); });
    case BinaryOp::Div: return arith([](T x, T y) { return T(x / y); });
    case BinaryOp::Maximum: return arith([](T x, T y) { return maximum_of(x, y); });
    case BinaryOp::Minimum: return arith([](T x, T y) { return minimum_of(x, y); });
    case BinaryOp::Eq: return compare([](T x, T y) { return x == y; });
    case BinaryOp::Ne: return compare([](T x, T y) { return x != y; });
    case BinaryOp::Lt: return compare([](T x, T y) { return x < y; });
    case BinaryOp::Le: return compare([](T x, T y) { return x <= y; });
    case BinaryOp::Gt: return compare([](T x, T y) { return x > y; });
    case BinaryOp::Ge: return compare([](T x, T y) { return x >= y; });
  }
}

}  // namespace

void CpuBackend::unary(UnaryOp op, const Tensor& x, const Tensor& out, UnaryParams p) {
  dispatch_arithmetic(x.dtype(), [&](auto tag) { unary_typed<decltype(tag)>(op, x, out, p); });
}

void CpuBackend::unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& dx,
                                UnaryParams p) {
  dispatch_floating(dx.dtype(), [&](auto tag) { unary_backward_typed<decltype(tag)>(op, x, y, dy, dx, p); });
}

void CpuBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (a.dtype() == DType::Bool) return binary_typed<bool>(op, a, b, out);
  dispatch_arithmetic(a.dtype(), [&](auto tag) { binary_typed<decltype(tag)>(op, a, b, out); });
}

void CpuBackend::where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    map_elements<T, bool, T, T>([](bool c, T x, T y) { return c ? x : y; }, out, {&cond, &a, &b});
  });
}

}  // namespace attn::cpu
