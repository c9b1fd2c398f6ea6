// The CPU implementation of the kernel interface (core/backend.hpp): every kernel of the
// table core/backend_kernels.def. Each group of kernels lives in its own file under
// core/cpu/: fill/copy and element-wise (elementwise.cpp), reductions and cumsum
// (reduce.cpp), GEMM (matmul.cpp), softmax (softmax.cpp), layer norm (layer_norm.cpp), RNG
// (random.cpp), dropout and its fused forms (dropout.cpp), fused bias + ReLU (bias_relu.cpp),
// the banded convolution (banded_conv.cpp), gated linear attention
// (gated_linear_attention.cpp), the delta rule (delta_rule.cpp), the fused attention forward
// (attention.cpp), indexing and top-k (indexing.cpp), cross entropy (cross_entropy.cpp), the optimizer updates, gradient norm and
// scaling (parameter_update.cpp). Parallel over outer dimensions with OpenMP. Kernels run to completion before they return, so the CPU's stream is the calling
// thread itself and synchronize() has nothing to wait for.
#pragma once
#include "core/backend.hpp"

namespace attn::cpu {

class CpuBackend final : public BackendBase<CpuBackend> {
 public:
  const char* name() const override { return "cpu"; }
  Stream stream(Device device) override { return Stream{device}; }
  void synchronize() override {}

#define ATTN_KERNEL(name, params, args) void name params override;
#include "core/backend_kernels.def"
#undef ATTN_KERNEL
};

}  // namespace attn::cpu
