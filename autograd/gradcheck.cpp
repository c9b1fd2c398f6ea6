// Finite-difference gradient check: analytic gradients of L = sum(f(x) * R) by backward()
// against central differences (L(x + eps e_k) - L(x - eps e_k)) / (2 eps), in float64, for
// every element k of every input that requires grad. An element passes when
// |analytic - numeric| <= atol + rtol * |numeric|.
#include "autograd/gradcheck.hpp"

#include <fmt/ranges.h>

#include <cmath>

#include "autograd/ops.hpp"
#include "core/rng.hpp"

namespace attn {
namespace {

constexpr uint64_t kWeightsSeed = 0x5eed;

// Position of every element of t (row-major order) relative to t's first element.
std::vector<int64_t> element_offsets(const Tensor& t) {
  std::vector<int64_t> offsets{0};
  for (int d = t.dim() - 1; d >= 0; --d) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * t.size(d));
    for (int64_t i = 0; i < t.size(d); ++i)
      for (int64_t inner : offsets) next.push_back(i * t.stride(d) + inner);
    offsets = std::move(next);
  }
  // Built from the last dim outwards, so the outermost index varies slowest: row-major.
  return offsets;
}

std::string multi_index(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (int d = shape.size() - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

double weighted_sum(const GradcheckFn& f, const std::vector<Tensor>& inputs, const std::vector<double>& weights) {
  NoGradGuard no_grad;
  std::vector<double> out = f(inputs).to_vector();
  double total = 0.0;
  for (size_t i = 0; i < out.size(); ++i) total += out[i] * weights[i];
  return total;
}

void check_input(const Tensor& x, size_t index) {
  ATTN_CHECK(x.dtype() == DType::Float64, "gradcheck: input {} is {}; gradcheck needs float64 inputs", index,
             dtype_name(x.dtype()));
  for (int d = 0; d < x.dim(); ++d)
    ATTN_CHECK(x.stride(d) != 0 || x.size(d) <= 1,
               "gradcheck: input {} {} is a broadcast view (stride 0 in dim {}); pass a materialised tensor", index,
               x.shape().str(), d);
}

struct WorstElement {
  double excess = 0.0;  // |diff| / allowed error
  std::string report;
  int failures = 0;
};

// Compares one input's analytic gradient with central differences, element by element.
void check_against_numeric(const GradcheckFn& f, const std::vector<Tensor>& inputs, size_t which,
                           const std::vector<double>& weights, const std::vector<double>& analytic,
                           const GradcheckOptions& options, GradcheckResult& result, WorstElement& worst) {
  const Tensor& x = inputs[which];
  double* data = x.data<double>();
  std::vector<int64_t> offsets = element_offsets(x);
  for (size_t k = 0; k < offsets.size(); ++k) {
    double& element = data[offsets[k]];
    const double original = element;
    element = original + options.eps;
    double plus = weighted_sum(f, inputs, weights);
    element = original - options.eps;
    double minus = weighted_sum(f, inputs, weights);
    element = original;
    double numeric = (plus - minus) / (2.0 * options.eps);
    double error = std::abs(analytic[k] - numeric);
    double allowed = options.atol + options.rtol * std::abs(numeric);
    result.max_abs_error = std::max(result.max_abs_error, error);
    if (!(error <= allowed)) ++worst.failures;  // NaN fails too
    double excess = std::isnan(error) ? INFINITY : error / allowed;
    if (excess > worst.excess) {
      worst.excess = excess;
      worst.report = fmt::format("input {} {} element {}: analytic {:.10g}, numeric {:.10g}, |diff| {:.3g}", which,
                                 x.shape().str(), multi_index(x.shape(), int64_t(k)), analytic[k], numeric, error);
    }
  }
}

}  // namespace

Tensor gradcheck_weights(const Shape& shape, DType dtype) {
  Generator gen(kWeightsSeed);
  return uniform(shape, -1.0, 1.0, DType::Float64, &gen).to(dtype);
}

std::vector<Tensor> weighted_gradients(const GradcheckFn& f, const std::vector<Tensor>& inputs, const Tensor& weights) {
  for (const Tensor& x : inputs) zero_grad(x);
  Tensor out = f(inputs);
  ATTN_CHECK(out.shape() == weights.shape(), "gradcheck: f returned shape {} but the weights have shape {}",
             out.shape().str(), weights.shape().str());
  if (requires_grad(out)) backward(sum(mul(out, weights.to(out.dtype()))));
  std::vector<Tensor> grads;
  for (const Tensor& x : inputs) {
    Tensor g = grad(x);
    if (requires_grad(x) && !g.defined()) g = zeros(x.shape(), x.dtype(), x.device());
    grads.push_back(g);
  }
  return grads;
}

GradcheckResult gradcheck(const GradcheckFn& f, std::vector<Tensor> inputs, GradcheckOptions options) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (requires_grad(inputs[i])) check_input(inputs[i], i);
  Tensor out = [&] {
    NoGradGuard no_grad;
    return f(inputs);
  }();
  Tensor weights = gradcheck_weights(out.shape(), DType::Float64);
  std::vector<double> weight_values = weights.to_vector();
  std::vector<Tensor> analytic = weighted_gradients(f, inputs, weights);

  GradcheckResult result;
  WorstElement worst;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (requires_grad(inputs[i]))
      check_against_numeric(f, inputs, i, weight_values, analytic[i].to_vector(), options, result, worst);
  if (worst.failures > 0) {
    result.ok = false;
    result.message = fmt::format("gradcheck failed at {} element(s); worst: {} (atol {}, rtol {})", worst.failures,
                                 worst.report, options.atol, options.rtol);
  }
  return result;
}

}  // namespace attn
