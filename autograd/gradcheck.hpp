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
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs,
                          GradcheckOptions options = {});

}  // namespace attn
