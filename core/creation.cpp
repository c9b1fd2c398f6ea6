// Tensor creation: constant fills, ranges, host vectors and random tensors drawn from the
// counter-based generator (core/rng.hpp). A random op reserves its counters on the host,
// then the device kernel computes element i from (seed, first, i) alone.
#include <cmath>
#include <cstring>

#include "core/backend.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn {

Tensor empty(const Shape& shape, DType dtype, Device device) { return Tensor(shape, dtype, device); }

Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }

Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t(shape, dtype, device);
  t.fill_(value);
  return t;
}

Tensor scalar_tensor(double value, DType dtype, Device device) { return full(Shape{}, value, dtype, device); }

Tensor arange(double start, double end, double step, DType dtype, Device device) {
  ATTN_CHECK(step != 0.0 && std::isfinite(step), "arange: step must be finite and non-zero, got {}", step);
  const int64_t n = std::max<int64_t>(0, int64_t(std::ceil((end - start) / step)));
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[size_t(i)] = start + double(i) * step;
  return from_doubles(values, Shape{n}, dtype, device);
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, Device device) {
  ATTN_CHECK(int64_t(values.size()) == shape.numel(), "from_vector: {} values for shape {} ({} elements)", values.size(),
             shape.str(), shape.numel());
  Tensor host(shape, dtype_of<T>::value, Device::cpu());
  T* p = host.data<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];  // element-wise: std::vector<bool> has no data()
  return host.to(device);
}

template Tensor from_vector<float>(const std::vector<float>&, const Shape&, Device);
template Tensor from_vector<double>(const std::vector<double>&, const Shape&, Device);
template Tensor from_vector<int32_t>(const std::vector<int32_t>&, const Shape&, Device);
template Tensor from_vector<int64_t>(const std::vector<int64_t>&, const Shape&, Device);
template Tensor from_vector<bool>(const std::vector<bool>&, const Shape&, Device);

Tensor from_doubles(const std::vector<double>& values, const Shape& shape, DType dtype, Device device) {
  return from_vector(values, shape, Device::cpu()).to(dtype).to(device);
}

namespace {

Generator& generator_or_default(Generator* gen) { return gen != nullptr ? *gen : default_generator(); }

void check_random_dtype(DType dtype, const char* what) {
  ATTN_CHECK(is_floating(dtype), "{}: needs a floating dtype, got {}", what, dtype_name(dtype));
}

}  // namespace

Tensor uniform(const Shape& shape, double low, double high, DType dtype, Generator* gen, Device device) {
  check_random_dtype(dtype, "uniform");
  ATTN_CHECK(low <= high, "uniform: low {} > high {}", low, high);
  Tensor t(shape, dtype, device);
  Generator& g = generator_or_default(gen);
  const uint64_t seed = g.state().seed, first = g.reserve(random_counters(t.numel(), dtype));
  backend_for(device).uniform(t, low, high, seed, first);
  return t;
}

Tensor normal(const Shape& shape, double mean, double stddev, DType dtype, Generator* gen, Device device) {
  check_random_dtype(dtype, "normal");
  ATTN_CHECK(stddev >= 0, "normal: negative stddev {}", stddev);
  Tensor t(shape, dtype, device);
  Generator& g = generator_or_default(gen);
  const uint64_t seed = g.state().seed, first = g.reserve(random_counters(t.numel(), dtype));
  backend_for(device).normal(t, mean, stddev, seed, first);
  return t;
}

Tensor bernoulli(const Shape& shape, double p, DType dtype, Generator* gen, Device device) {
  ATTN_CHECK(p >= 0 && p <= 1, "bernoulli: probability {} outside [0, 1]", p);
  Tensor u = uniform(shape, 0.0, 1.0, DType::Float32, gen, device);
  Tensor mask(shape, DType::Bool, device);
  backend_for(device).binary(BinaryOp::Lt, u, scalar_tensor(p, DType::Float32, device).expand(shape), mask);
  return mask.to(dtype);
}

}  // namespace attn
