// The scalars of one optimizer update, formed in double on the host (nn/adam.cpp,
// nn/nag.cpp) and handed to the update kernels (core/backend_kernels.def: adam_update,
// nag_update) as float32, the precision the update runs in. Passing them by value means an
// update on any device needs nothing read back to the host.
#pragma once

namespace attn {

// Both updates read each gradient element as g = grad·grad_scale (float32): the step's
// normalisation and clipping (nn/grad_clip.hpp), applied on the way in instead of in a pass of
// their own over the gradients.
//
// θ ← θ + decay·θ (only when decays); m ← β₁·m + (1−β₁)·g; v ← β₂·v + (1−β₂)·g²;
// θ ← θ + neg_step_size · m / (√v + ε)      (nn/adam.hpp)
struct AdamUpdate {
  float beta1, beta2, one_minus_beta1, one_minus_beta2, eps;
  float decay;          // −lr·wd
  float neg_step_size;  // −lr·√(1−β₂ᵗ)/(1−β₁ᵗ)
  bool decays;          // wd ≠ 0
  float grad_scale = 1.0f;
};

// θ ← θ·shrink (only when decays); θ ← θ + buffer_to_param·b; θ ← θ + grad_to_param·g;
// b ← buffer_decay·b + grad_to_buffer·g      (nn/nag.hpp)
struct NagUpdate {
  float shrink;           // 1 − lr·wd
  float buffer_to_param;  // μ²·r
  float grad_to_param;    // −(1+μ)·lr
  float buffer_decay;     // μ·r
  float grad_to_buffer;   // −lr
  bool decays;            // wd ≠ 0
  float grad_scale = 1.0f;
};

}  // namespace attn
