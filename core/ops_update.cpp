// Raw ops of the training step (core/ops_update.hpp): validation, then the device's kernel.
#include "core/ops_update.hpp"

#include <initializer_list>

#include "core/backend.hpp"

namespace attn::ops {
namespace {

// Every tensor of `tensors` (named by `names`) is contiguous float32 of `like`'s shape and device.
void check_float_state(const char* op, std::initializer_list<const Tensor*> tensors,
                       std::initializer_list<const char*> names) {
  const Tensor& like = **tensors.begin();
  auto name = names.begin();
  for (const Tensor* t : tensors) {
    ATTN_CHECK(t->defined(), "{}: {} is undefined", op, *name);
    ATTN_CHECK(t->dtype() == DType::Float32 && t->is_contiguous(), "{}: {} must be contiguous float32, got {} {}{}",
               op, *name, dtype_name(t->dtype()), t->shape().str(), t->is_contiguous() ? "" : " (strided)");
    ATTN_CHECK(t->shape() == like.shape() && t->device() == like.device(), "{}: {} is {} on {} but {} is {} on {}",
               op, *name, t->shape().str(), t->device().str(), *names.begin(), like.shape().str(), like.device().str());
    ++name;
  }
}

// flag is a 0-d tensor of `dtype` on `device`.
void check_scalar(const char* op, const Tensor& flag, const char* what, DType dtype, Device device) {
  ATTN_CHECK(flag.dim() == 0 && flag.dtype() == dtype && flag.device() == device,
             "{}: {} must be a 0-d {} tensor on {}, got {} {} on {}", op, what, dtype_name(dtype), device.str(),
             dtype_name(flag.dtype()), flag.shape().str(), flag.device().str());
}

}  // namespace

void adam_update_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                  const AdamUpdate& update) {
  check_float_state("adam_update_", {&param, &grad, &exp_avg, &exp_avg_sq},
                    {"parameter", "gradient", "exp_avg", "exp_avg_sq"});
  backend_for(param.device()).adam_update(param, grad, exp_avg, exp_avg_sq, update);
}

void nag_update_(const Tensor& param, const Tensor& grad, const Tensor& buffer, const NagUpdate& update) {
  check_float_state("nag_update_", {&param, &grad, &buffer}, {"parameter", "gradient", "momentum buffer"});
  backend_for(param.device()).nag_update(param, grad, buffer, update);
}

void add_sum_of_squares_(const Tensor& total, const Tensor& x) {
  check_float_state("add_sum_of_squares_", {&x}, {"input"});
  check_scalar("add_sum_of_squares_", total, "the total", DType::Float64, x.device());
  backend_for(x.device()).add_sum_of_squares(x, total);
}

void scale_(const Tensor& x, double scale, const Tensor& found_nonfinite) {
  check_float_state("scale_", {&x}, {"input"});
  if (found_nonfinite.defined())
    check_scalar("scale_", found_nonfinite, "the non-finite flag", DType::Float32, x.device());
  backend_for(x.device()).scale_check_finite(x, scale, found_nonfinite);
}

}  // namespace attn::ops
