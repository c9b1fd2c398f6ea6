// Launches the banded-convolution kernels of cuda/kernels/banded_conv.cuh
// (cuda/kernel_launch.hpp): a thread per output element, and for shared taps' gradient a
// block per (chunk of rows, tap) followed by the in-order sum over the chunks.
#include "cuda/kernels/banded_conv.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {
namespace {

constexpr int kTapRowsPerChunk = 64;  // rows per block of the shared taps' gradient

}  // namespace

int64_t banded_conv_tap_chunks(const cuda_kernels::BandShape& shape) {
  return (shape.rows + kTapRowsPerChunk - 1) / kTapRowsPerChunk;
}

void launch_banded_conv(const float* u, const float* w, float* out, const cuda_kernels::BandShape& shape,
                        void* stream) {
  const int64_t n = shape.rows * shape.channels;
  if (n == 0) return;
  launch_kernel("banded_conv_kernel", cuda_kernels::banded_conv_kernel, grid_for(n), kThreadsPerBlock, 0, stream, u,
                w, out, shape);
}

void launch_banded_conv_backward(const float* u, const float* w, const float* dout, float* du, float* dw,
                                 double* partial, const cuda_kernels::BandShape& shape, void* stream) {
  const int64_t n = shape.rows * shape.channels;
  if (n > 0)
    launch_kernel("banded_conv_input_grad_kernel", cuda_kernels::banded_conv_input_grad_kernel, grid_for(n),
                  kThreadsPerBlock, 0, stream, w, dout, du, shape);
  const int taps = shape.heads * shape.kernel;
  if (!shape.shared) {
    const int64_t elements = shape.rows * taps;
    if (elements > 0)
      launch_kernel("banded_conv_position_tap_grad_kernel", cuda_kernels::banded_conv_position_tap_grad_kernel,
                    grid_for(elements), kThreadsPerBlock, 0, stream, u, dout, dw, shape);
    return;
  }
  const int64_t chunks = banded_conv_tap_chunks(shape);
  if (chunks > 0)
    launch_kernel("banded_conv_shared_tap_partials_kernel", cuda_kernels::banded_conv_shared_tap_partials_kernel,
                  dim3(unsigned(chunks), unsigned(taps)), kThreadsPerBlock, 32 * sizeof(double), stream, u, dout,
                  partial, shape, kTapRowsPerChunk);
  const unsigned tap_blocks = unsigned((taps + kThreadsPerBlock - 1) / kThreadsPerBlock);
  launch_kernel("banded_conv_shared_tap_sum_kernel", cuda_kernels::banded_conv_shared_tap_sum_kernel, tap_blocks,
                kThreadsPerBlock, 0, stream, static_cast<const double*>(partial), dw, taps, int(chunks));
}

}  // namespace attn::cuda
