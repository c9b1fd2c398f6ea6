// Launches the fused attention forward of cuda/kernels/attention.cuh (cuda/kernel_launch.hpp):
// one block of a warp per query of a tile, per (batch, head, tile of queries), in one grid
// dimension.
#include "cuda/kernels/attention.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_attention_forward(const float* q, const float* k, const float* v, const bool* padding, float* out,
                              float* probabilities, const cuda_kernels::AttentionShape& shape, void* stream) {
  if (shape.blocks() == 0) return;
  launch_kernel("attention_forward_kernel", cuda_kernels::attention_forward_kernel, unsigned(shape.blocks()),
                unsigned(shape.threads()), size_t(shape.shared_floats()) * sizeof(float), stream, q,
                k, v, padding, out, probabilities, shape);
}

}  // namespace attn::cuda
