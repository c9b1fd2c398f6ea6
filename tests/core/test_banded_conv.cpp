// The banded convolution kernels (core/cpu/banded_conv.cpp, docs/models.md §3.1, §3.4):
// forward and backward against plain float64 loops for shared [H, K] and per-position
// [B, T, H, K] taps, centred and causal padding, K > T, K = 1, T = 1, strided inputs; the
// same bits at 1 and 2 threads; bad shapes are named.
#include <catch.hpp>

#include "core/ops.hpp"
#include "core/threads.hpp"
#include "reference.hpp"

using namespace attn;
using namespace attn::test;
using Catch::Matchers::Contains;

namespace {

struct Case {
  int64_t batch, length, channels, heads, kernel, padding;
  bool shared;
};

// Row-major index helpers over the flattened values.
struct Index {
  const Case& c;
  int64_t u(int64_t b, int64_t t, int64_t ch) const { return (b * c.length + t) * c.channels + ch; }
  int64_t w(int64_t b, int64_t t, int64_t h, int64_t j) const {
    return c.shared ? h * c.kernel + j : ((b * c.length + t) * c.heads + h) * c.kernel + j;
  }
};

struct Expected {
  std::vector<double> out, du, dw;
};

Expected reference(const Case& c, const std::vector<double>& u, const std::vector<double>& w,
                   const std::vector<double>& g) {
  const Index at{c};
  const int64_t per_head = c.channels / c.heads;
  Expected e{std::vector<double>(u.size()), std::vector<double>(u.size()), std::vector<double>(w.size())};
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t t = 0; t < c.length; ++t)
      for (int64_t ch = 0; ch < c.channels; ++ch)
        for (int64_t j = 0; j < c.kernel; ++j) {
          const int64_t s = t + j - c.padding, h = ch / per_head;
          if (s < 0 || s >= c.length) continue;
          const size_t wi = size_t(at.w(b, t, h, j)), out = size_t(at.u(b, t, ch)), in = size_t(at.u(b, s, ch));
          e.out[out] += w[wi] * u[in];
          e.du[in] += w[wi] * g[out];
          e.dw[wi] += g[out] * u[in];
        }
  return e;
}

void check_case(const Case& c, DType dtype, int layout = 0) {
  const Shape taps = c.shared ? Shape{c.heads, c.kernel} : Shape{c.batch, c.length, c.heads, c.kernel};
  const Tensor u = random_tensor({c.batch, c.length, c.channels}, dtype, 1, layout);
  const Tensor w = random_tensor(taps, dtype, 2), g = random_tensor({c.batch, c.length, c.channels}, dtype, 3);
  const Expected e = reference(c, u.to_vector(), w.to_vector(), g.to_vector());
  INFO("B " << c.batch << " T " << c.length << " C " << c.channels << " H " << c.heads << " K " << c.kernel << " P "
            << c.padding << (c.shared ? " shared" : " per-position") << " layout " << layout);
  check_all_close(ops::banded_conv(u, w, c.padding).to_vector(), e.out, 10 * tolerance_for(dtype));
  const ops::BandedConvGrads grads = ops::banded_conv_backward(u, w, g, c.padding);
  check_all_close(grads.du.to_vector(), e.du, 10 * tolerance_for(dtype));
  check_all_close(grads.dw.to_vector(), e.dw, 100 * tolerance_for(dtype));
}

}  // namespace

TEST_CASE("banded_conv forward and backward equal the float64 loops") {
  for (bool shared : {true, false})
    for (DType dtype : {DType::Float32, DType::Float64}) {
      check_case({2, 7, 8, 2, 5, 2, shared}, dtype);     // centred
      check_case({2, 7, 8, 2, 4, 3, shared}, dtype);     // causal
      check_case({2, 3, 6, 3, 7, 6, shared}, dtype);     // K > T, causal
      check_case({2, 3, 6, 3, 7, 3, shared}, dtype);     // K > T, centred
      check_case({1, 1, 4, 2, 3, 1, shared}, dtype);     // T = 1
      check_case({3, 5, 4, 4, 1, 0, shared}, dtype);     // K = 1
      check_case({2, 6, 8, 2, 5, 0, shared}, dtype);     // all taps to the right
      check_case({2, 6, 8, 2, 3, 1, shared}, dtype, 2);  // strided input
    }
}

TEST_CASE("banded_conv gives the same bits at 1 and 2 threads (large, parallel)") {
  for (bool shared : {true, false}) {
    const Case c{4, 300, 64, 4, 15, 14, shared};
    const Shape taps = shared ? Shape{c.heads, c.kernel} : Shape{c.batch, c.length, c.heads, c.kernel};
    const Tensor u = random_tensor({c.batch, c.length, c.channels}, DType::Float32, 4);
    const Tensor w = random_tensor(taps, DType::Float32, 5), g = random_tensor(u.shape(), DType::Float32, 6);
    auto run = [&](int threads) {
      set_num_threads(threads);
      const ops::BandedConvGrads grads = ops::banded_conv_backward(u, w, g, c.padding);
      return std::vector{ops::banded_conv(u, w, c.padding).to_vector(), grads.du.to_vector(), grads.dw.to_vector()};
    };
    const auto one = run(1), two = run(2);
    CHECK(one == two);
  }
}

TEST_CASE("banded_conv names bad shapes and paddings") {
  const Tensor u = zeros({2, 5, 6});
  CHECK_THROWS_WITH(ops::banded_conv(u, zeros({4, 3}), 1), Contains("cannot be split into the taps' 4 heads"));
  CHECK_THROWS_WITH(ops::banded_conv(u, zeros({2, 3}), 3), Contains("padding_left 3 outside [0, 2]"));
  CHECK_THROWS_WITH(ops::banded_conv(u, zeros({2, 4, 3, 3}), 1), Contains("[B, T, H, K] = [2, 5, H, K]"));
  CHECK_THROWS_WITH(ops::banded_conv(zeros({5, 6}), zeros({2, 3}), 1), Contains("[B, T, C]"));
}
