// Finite-difference gradient check (central differences, float64).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

struct GradcheckResult {
  bool ok = true;
  std::string message;  // on failure: input, element index, analytic vs numeric, worst error
  double max_abs_error = 0.0;
};

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-4;
};

// f maps the inputs (float64, requiring grad) to an output of any shape; the check
// compares the gradient of sum(output * R) for a fixed random R against central finite
// differences, for every element of every input that requires grad.
using GradcheckFn = std::function<Tensor(const std::vector<Tensor>&)>;
GradcheckResult gradcheck(const GradcheckFn& f, std::vector<Tensor> inputs, GradcheckOptions options = {});

// The building blocks, also used to compare float32 against float64 gradients:
// the fixed random weights R for an output of this shape (uniform in [-1, 1), seeded),
Tensor gradcheck_weights(const Shape& shape, DType dtype);
// and the analytic gradients of sum(f(inputs) * weights) by backward(), one per input
// (undefined for inputs that do not require grad, zeros where no gradient reached).
// Clears the inputs' .grad first.
std::vector<Tensor> weighted_gradients(const GradcheckFn& f, const std::vector<Tensor>& inputs, const Tensor& weights);

}  // namespace attn
