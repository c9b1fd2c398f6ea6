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

// A group's tensors all live on the device of its first.
void check_same_device(const char* op, const Tensor& t, const Tensor& first) {
  ATTN_CHECK(t.device() == first.device(), "{}: a group holds tensors on {} and on {}", op, first.device().str(),
             t.device().str());
}

}  // namespace

void adam_update_(const std::vector<AdamTensors>& group) {
  if (group.empty()) return;
  for (const AdamTensors& t : group) {
    check_float_state("adam_update_", {&t.param, &t.grad, &t.exp_avg, &t.exp_avg_sq},
                      {"parameter", "gradient", "exp_avg", "exp_avg_sq"});
    check_same_device("adam_update_", t.param, group.front().param);
  }
  backend_for(group.front().param.device()).adam_update(group);
}

void nag_update_(const std::vector<NagTensors>& group) {
  if (group.empty()) return;
  for (const NagTensors& t : group) {
    check_float_state("nag_update_", {&t.param, &t.grad, &t.buffer}, {"parameter", "gradient", "momentum buffer"});
    check_same_device("nag_update_", t.param, group.front().param);
  }
  backend_for(group.front().param.device()).nag_update(group);
}

void moving_average_(const std::vector<AverageTensors>& group, double decay) {
  if (group.empty()) return;
  for (const AverageTensors& t : group) {
    check_float_state("moving_average_", {&t.average, &t.value}, {"average", "value"});
    check_same_device("moving_average_", t.average, group.front().average);
  }
  backend_for(group.front().average.device()).moving_average(group, decay);
}

void add_sum_of_squares_(const Tensor& total, const std::vector<Tensor>& xs) {
  if (xs.empty()) return;
  for (const Tensor& x : xs) {
    check_float_state("add_sum_of_squares_", {&x}, {"input"});
    check_same_device("add_sum_of_squares_", x, xs.front());
  }
  check_scalar("add_sum_of_squares_", total, "the total", DType::Float64, xs.front().device());
  backend_for(total.device()).add_sum_of_squares(xs, total);
}

void scale_(const std::vector<Tensor>& xs, double scale, const Tensor& found_nonfinite) {
  if (xs.empty()) return;
  for (const Tensor& x : xs) {
    check_float_state("scale_", {&x}, {"input"});
    check_same_device("scale_", x, xs.front());
  }
  if (found_nonfinite.defined())
    check_scalar("scale_", found_nonfinite, "the non-finite flag", DType::Float32, xs.front().device());
  backend_for(xs.front().device()).scale_check_finite(xs, scale, found_nonfinite);
}

}  // namespace attn::ops
