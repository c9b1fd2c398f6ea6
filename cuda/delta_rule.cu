// Launches the delta-rule kernels of cuda/kernels/delta_rule.cuh (cuda/kernel_launch.hpp): a
// block per (row, slice of value rows), a warp per value row, as cuda/scan_plan.hpp split
// them; the backward's sums over several slices are added after it.
#include "cuda/kernels/delta_rule.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_delta_rule(const float* q, const float* k, const float* v, const float* beta, float* state, float* y,
                       const cuda_kernels::ScanShape& shape, void* stream) {
  if (shape.rows == 0 || shape.values == 0) return;
  launch_kernel("delta_rule_kernel", cuda_kernels::delta_rule_kernel,
                dim3(unsigned(shape.rows), unsigned(shape.slices())), unsigned(32 * shape.value_rows),
                size_t(shape.slice_floats()) * sizeof(float), stream, cuda_kernels::DeltaInputs{q, k, v, beta}, state,
                y, shape);
}

void launch_delta_rule_backward(const float* q, const float* k, const float* v, const float* beta, const float* dy,
                                float* dq, float* dk, float* dv, float* dbeta, float* scratch,
                                const cuda_kernels::ScanShape& shape, void* stream) {
  const int64_t plane = int64_t(shape.rows) * shape.length * shape.features;
  const int64_t beta_plane = int64_t(shape.rows) * shape.length;
  if (shape.values == 0) {  // no value rows to sum over
    const float zero = 0.0f;
    launch_fill(&zero, sizeof zero, dq, plane, stream);
    launch_fill(&zero, sizeof zero, dk, plane, stream);
    launch_fill(&zero, sizeof zero, dbeta, beta_plane, stream);
    return;
  }
  if (shape.rows == 0 || shape.length == 0) return;
  const int slices = shape.slices();
  float* planes = scratch + int64_t(shape.rows) * shape.chunks() * shape.state_size();
  const auto target = [&](float* grad, int vector) { return slices > 1 ? planes + vector * slices * plane : grad; };
  const cuda_kernels::DeltaGrads out{dy, target(dq, 0), target(dk, 1), dv, target(dbeta, 2),
                                     slices > 1 ? plane : 0, slices > 1 ? beta_plane : 0};
  launch_kernel("delta_rule_backward_kernel", cuda_kernels::delta_rule_backward_kernel,
                dim3(unsigned(shape.rows), unsigned(slices)), unsigned(32 * shape.value_rows),
                size_t(shape.backward_shared_bytes()), stream, cuda_kernels::DeltaInputs{q, k, v, beta}, out, scratch,
                shape);
  if (slices == 1) return;
  launch_sum_slices(out.dq, dq, plane, slices, stream);
  launch_sum_slices(out.dk, dk, plane, slices, stream);
  launch_sum_slices(out.dbeta, dbeta, beta_plane, slices, stream);
}

}  // namespace attn::cuda
