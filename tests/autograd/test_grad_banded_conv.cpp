// The differentiable banded convolution (autograd/fused/banded_conv.hpp): finite-difference
// gradchecks in float64 of the input and the taps, shared and per-position, centred and
// causal; and values and gradients equal to the same convolution composed of plain ops.
#include <catch.hpp>

#include "autograd/fused/banded_conv.hpp"
#include "grad_test_util.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

// The convolution from pad + narrow + mul + sum: O = Σ_j W[.., j] ⊙ U shifted by j − P.
Tensor composed(const Tensor& u, const Tensor& w, int64_t padding) {
  const int64_t batch = u.size(0), length = u.size(1), channels = u.size(2), heads = w.size(-2), kernel = w.size(-1);
  const Tensor padded = cat({zeros({batch, padding, channels}, u.dtype()), u,
                             zeros({batch, kernel - 1 - padding, channels}, u.dtype())},
                            1);
  const Tensor taps = w.dim() == 2 ? reshape(w, {1, 1, heads, kernel}) : w;
  Tensor out;
  for (int64_t j = 0; j < kernel; ++j) {
    const Tensor window = reshape(narrow(padded, 1, j, length), {batch, length, heads, channels / heads});
    const Tensor term = mul(window, narrow(taps, -1, j, 1));
    out = out.defined() ? add(out, term) : term;
  }
  return reshape(out, {batch, length, channels});
}

}  // namespace

TEST_CASE("banded_conv gradcheck in float64 (input and taps; shared and per-position; centred and causal)") {
  for (bool shared : {true, false})
    for (int64_t padding : {1, 2}) {
      const Shape taps = shared ? Shape{2, 3} : Shape{2, 4, 2, 3};
      std::vector<Tensor> inputs = {leaf({2, 4, 4}, 41), leaf(taps, 42)};
      auto f = [&](const std::vector<Tensor>& in) { return banded_conv(in[0], in[1], padding); };
      GradcheckResult r = gradcheck(f, inputs);
      INFO((shared ? "shared" : "per-position") << " P=" << padding << ": " << r.message);
      CHECK(r.ok);
    }
}

TEST_CASE("banded_conv equals the composed-ops convolution in value and gradient") {
  for (bool shared : {true, false}) {
    const Shape taps = shared ? Shape{2, 5} : Shape{2, 6, 2, 5};
    Tensor u1 = leaf({2, 6, 4}, 43), w1 = leaf(taps, 44);
    Tensor u2 = leaf({2, 6, 4}, 43), w2 = leaf(taps, 44);
    const Tensor g = leaf({2, 6, 4}, 45);
    const Tensor fused = banded_conv(u1, w1, 2), plain = composed(u2, w2, 2);
    attn::test::check_close(fused, plain, 1e-12);
    backward(fused, detach(g));
    backward(plain, detach(g));
    attn::test::check_close(grad(u1), grad(u2), 1e-12);
    attn::test::check_close(grad(w1), grad(w2), 1e-12);
  }
}
