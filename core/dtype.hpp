// Element types. Float64 exists for gradcheck and reference tests; Bool holds masks
// (one byte per element) produced by comparisons and consumed by where/masked_fill.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace attn {

enum class DType : uint8_t { Float32, Float64, Int32, Int64, Bool };

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}
constexpr bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "?";
}

// C++ type <-> DType.
template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };

// Calls f(T{}) with T the C++ type of `t` (bool for Bool), e.g.
//   dispatch_dtype(x.dtype(), [&](auto tag) { using T = decltype(tag); ... });
template <typename F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Bool: return f(bool{});
  }
  return f(float{});
}
template <typename F>
decltype(auto) dispatch_floating(DType t, F&& f) {
  if (t == DType::Float64) return f(double{});
  return f(float{});
}

}  // namespace attn
