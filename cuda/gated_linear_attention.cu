// Launches the gated linear attention kernels of cuda/kernels/gated_linear_attention.cuh
// (cuda/kernel_launch.hpp): a block per (row, slice of value rows), a warp per value row, as
// cuda/scan_plan.hpp split them; the backward's sums over several slices are added after it.
#include "cuda/kernels/gated_linear_attention.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_gated_linear_attention(const float* q, const float* k, const float* v, const float* a, const float* b,
                                   float* state, float* y, const cuda_kernels::ScanShape& shape, void* stream) {
  if (shape.rows == 0 || shape.values == 0) return;
  launch_kernel("gated_linear_attention_kernel", cuda_kernels::gated_linear_attention_kernel,
                dim3(unsigned(shape.rows), unsigned(shape.slices())), unsigned(32 * shape.value_rows),
                size_t(shape.slice_floats()) * sizeof(float), stream, cuda_kernels::GatedInputs{q, k, v, a, b}, state,
                y, shape);
}

void launch_gated_linear_attention_backward(const float* q, const float* k, const float* v, const float* a,
                                            const float* b, const float* dy, float* dq, float* dk, float* dv,
                                            float* da, float* db, float* scratch,
                                            const cuda_kernels::ScanShape& shape, void* stream) {
  const int64_t plane = int64_t(shape.rows) * shape.length * shape.features;
  if (shape.values == 0) {  // no value rows to sum over
    const float zero = 0.0f;
    for (float* grad : {dq, dk, db})
      if (grad) launch_fill(&zero, sizeof zero, grad, plane, stream);
    return;
  }
  if (shape.rows == 0 || shape.length == 0) return;
  const int slices = shape.slices();
  float* planes = scratch + int64_t(shape.rows) * shape.chunks() * shape.state_size();
  const auto target = [&](float* grad, int vector) { return slices > 1 ? planes + vector * slices * plane : grad; };
  const cuda_kernels::GatedGrads out{dy, target(dq, 0), target(dk, 1), dv, da, db ? target(db, 2) : nullptr,
                                     slices > 1 ? plane : 0};
  launch_kernel("gated_linear_attention_backward_kernel", cuda_kernels::gated_linear_attention_backward_kernel,
                dim3(unsigned(shape.rows), unsigned(slices)), unsigned(32 * shape.value_rows),
                size_t(shape.backward_shared_bytes()), stream, cuda_kernels::GatedInputs{q, k, v, a, b}, out, scratch,
                shape);
  if (slices == 1) return;
  launch_sum_slices(out.dq, dq, plane, slices, stream);
  launch_sum_slices(out.dk, dk, plane, slices, stream);
  if (db) launch_sum_slices(out.db, db, plane, slices, stream);
}

}  // namespace attn::cuda
