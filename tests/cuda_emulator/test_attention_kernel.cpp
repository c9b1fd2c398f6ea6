// The fused attention forward's CUDA kernel (cuda/kernels/attention.cuh), compiled by the host
// compiler and run on the emulator (cuda/emulator/emulator.hpp) under both thread schedules,
// against the CPU backend's attention_forward (the composed path's GEMMs, mask and softmax,
// core/cpu/attention.cpp) and a float64 loop: causal and not, key padding with a fully padded
// sentence, causal rows with no visible key (Tq > Tk), a decoding step (Tq = 1), Tk not a
// multiple of the key tile, Tq not a multiple of the query tile, dv wider than a warp, and
// q, k, v and out as heads of [B, T, H, d] tensors (strided views), as the mixers pass them.
#include <catch.hpp>

#include <cmath>
#include <vector>

#include "core/kernel_test_data.hpp"
#include "core/ops.hpp"
#include "core/ops_attention.hpp"
#include "cuda/attention_shape.hpp"
#include "cuda/kernels/attention.cuh"

using namespace attn;
using namespace attn::cuda_emulator;
using namespace attn::cuda_kernels;
using attn::test::random_tensor;

namespace {

const Schedule kSchedules[] = {Schedule::Ascending, Schedule::Descending};
constexpr double kTolerance = 2e-6;

struct AttentionCase {
  int64_t batch, heads, queries, keys, width, value_width;
  bool causal, padded;
};

// [B, H, T, width] heads of a [B, T, H, width] tensor: a permuted view, heads interleaved.
Tensor heads_of(int64_t batch, int64_t heads, int64_t length, int64_t width, uint64_t seed) {
  return random_tensor({batch, length, heads, width}, DType::Float32, seed).permute({0, 2, 1, 3});
}

// Bool [B, Tk]: sentence 0 padded at its last two keys, sentence 1 (when there is one) at all.
Tensor key_padding(int64_t batch, int64_t keys) {
  std::vector<int64_t> flags(size_t(batch * keys), 0);
  for (int64_t j = keys - 2; j < keys; ++j) flags[size_t(j)] = 1;
  for (int64_t i = keys; i < batch * keys; ++i) flags[size_t(i)] = i < 2 * keys;
  return ops::ne(from_vector(flags, {batch, keys}), 0.0);
}

// P[b,h,i,:] = softmax over the visible keys of scale·q_i·k_j (zeros when none), in float64.
std::vector<double> reference_probabilities(const Tensor& q, const Tensor& k, const Tensor& pad, bool causal,
                                            double scale) {
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), Tk = k.size(2), d = q.size(3);
  std::vector<double> probs(size_t(B * H * Tq * Tk), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Tq; ++i) {
        std::vector<double> s(size_t(Tk), -INFINITY);
        double max = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < Tk; ++j) {
          if ((pad.defined() && pad.at({b, j}) != 0.0) || (causal && j > i + Tk - Tq)) continue;
          double dot = 0.0;
          for (int64_t c = 0; c < d; ++c) dot += q.at({b, h, i, c}) * k.at({b, h, j, c});
          s[size_t(j)] = scale * dot;
          max = std::max(max, s[size_t(j)]);
        }
        if (max == -INFINITY) continue;
        for (double& x : s) sum += (x = std::exp(x - max));
        for (int64_t j = 0; j < Tk; ++j) probs[size_t(((b * H + h) * Tq + i) * Tk + j)] = s[size_t(j)] / sum;
      }
  return probs;
}

void check_close(const Tensor& got, const Tensor& expected) {
  REQUIRE(got.shape() == expected.shape());
  const std::vector<double> g = got.to_vector(), e = expected.to_vector();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << " of " << got.shape().str());
    CHECK(g[i] == Approx(e[i]).epsilon(kTolerance).margin(kTolerance));
  }
}

void check_case(const AttentionCase& c, Schedule schedule) {
  const double scale = 0.4;
  const Tensor q = heads_of(c.batch, c.heads, c.queries, c.width, 1);
  const Tensor k = heads_of(c.batch, c.heads, c.keys, c.width, 2);
  const Tensor v = heads_of(c.batch, c.heads, c.keys, c.value_width, 3);
  const Tensor pad = c.padded ? key_padding(c.batch, c.keys) : Tensor();
  const Shape out_shape{c.batch, c.heads, c.queries, c.value_width}, p_shape{c.batch, c.heads, c.queries, c.keys};

  const Tensor expected_out = full({c.batch, c.queries, c.heads, c.value_width}, 0.0).permute({0, 2, 1, 3});
  const Tensor expected_p(p_shape, DType::Float32);
  ops::attention_forward_into(q, k, v, pad, c.causal, scale, expected_out, expected_p);

  // out in q's layout, as scaled_dot_product.cpp allocates it; both start as a value no
  // kernel writes.
  const Tensor out = full({c.batch, c.queries, c.heads, c.value_width}, -7.0).permute({0, 2, 1, 3});
  const Tensor p = full(p_shape, -7.0);
  const AttentionShape s = cuda::attention_shape(q, k, v, out, scale, c.causal);
  launch(LaunchConfig{.grid = {unsigned(s.blocks())},
                      .block = {unsigned(s.threads())},
                      .shared_bytes = size_t(s.shared_floats()) * sizeof(float),
                      .schedule = schedule},
         attention_forward_kernel, static_cast<const float*>(q.data<float>()),
         static_cast<const float*>(k.data<float>()), static_cast<const float*>(v.data<float>()),
         static_cast<const bool*>(pad.defined() ? pad.data<bool>() : nullptr), out.data<float>(), p.data<float>(), s);
  CHECK(out.shape() == out_shape);
  check_close(out, expected_out);
  check_close(p, expected_p);
  attn::test::require_close(p, reference_probabilities(q, k, pad, c.causal, scale), 1e-6);
}

}  // namespace

TEST_CASE("cuda attention_forward_kernel matches the CPU backend, masks, decoding and ragged tiles",
          "[cuda_kernels]") {
  const std::vector<AttentionCase> cases = {
      // B, H, Tq, Tk, d, dv, causal, padded
      {2, 2, 5, 37, 8, 40, false, true},   // ragged query and key tiles; sentence 1 fully padded
      {2, 2, 5, 37, 8, 40, true, true},    // causal and padded
      {1, 3, 37, 37, 16, 16, true, false}, // self-attention, several key tiles
      {2, 2, 1, 37, 8, 12, true, true},    // a decoding step sees every cached key
      {1, 2, 6, 3, 4, 5, true, false},     // Tq > Tk: the first rows see no key
      {2, 1, 4, 64, 32, 128, false, false},  // the widest values: four columns per lane
  };
  for (const Schedule schedule : kSchedules)
    for (const AttentionCase& c : cases) {
      INFO("schedule " << int(schedule) << ", B " << c.batch << " H " << c.heads << " Tq " << c.queries << " Tk "
                       << c.keys << " d " << c.width << " dv " << c.value_width << " causal " << c.causal
                       << " padded " << c.padded);
      check_case(c, schedule);
    }
}

TEST_CASE("attention tiles take as many queries as Tq needs (4 to 16) and shared memory holds", "[cuda_kernels]") {
  AttentionShape s{};
  const auto tile = [&](int queries, int keys, int width) {
    s.queries = queries, s.keys = keys, s.width = s.value_width = width;
    s.tile_queries = fitting_tile_queries(s);
    CHECK(s.shared_floats() * long(sizeof(float)) <= kAttentionSharedBytesLimit);
    return s.tile_queries;
  };
  CHECK(tile(32, 32, 64) == 16);  // a base model's training batch: four times fewer K/V reads than tiles of 4
  CHECK(tile(1, 300, 64) == 4);   // a decoding step: one query, four warps to stage keys and values
  CHECK(tile(5, 37, 8) == 8);     // the power of two that covers Tq
  CHECK(tile(int(kFusedAttentionMaxKeys), int(kFusedAttentionMaxKeys), int(kFusedAttentionMaxHeadWidth)) == 4);
  CHECK(tile(64, int(kFusedAttentionMaxKeys), 64) == 8);
}
