// The CUDA kernels of the attention variants — the banded convolution of LightConv and
// DynamicConv (cuda/kernels/banded_conv.cuh), gated linear attention
// (gated_linear_attention.cuh) and the delta rule (delta_rule.cuh) — compiled by the host
// compiler and run on the emulator (cuda/emulator/emulator.hpp) against the CPU backend's
// kernels on small shapes, under both thread schedules: shared and per-position taps,
// padding 0, centred and K − 1, a kernel wider than the sentence, the shared taps' gradient
// over several row chunks; the scans with and without each gate, a nonzero initial state,
// T not a multiple of the backward's chunk, M not a multiple of the warp, value rows split
// over several blocks (a last one part empty) or all in one; and how the launch splits a
// scan (cuda/scan_plan.hpp) within the shared memory a block gets.
#include <catch.hpp>

#include <vector>

#include "core/kernel_test_data.hpp"
#include "core/ops.hpp"
#include "cuda/kernels/banded_conv.cuh"
#include "cuda/kernels/delta_rule.cuh"
#include "cuda/kernels/gated_linear_attention.cuh"
#include "cuda/kernels/sum_slices.cuh"
#include "cuda/scan_plan.hpp"

using namespace attn;
using namespace attn::cuda_emulator;
using namespace attn::cuda_kernels;
using attn::test::random_tensor;

namespace {

const Schedule kSchedules[] = {Schedule::Ascending, Schedule::Descending};
constexpr double kTolerance = 1e-5;

// got and expected agree to kTolerance, relative or (near zero) absolute.
void check_close(const Tensor& got, const Tensor& expected) {
  REQUIRE(got.shape() == expected.shape());
  const float *g = got.data<float>(), *e = expected.data<float>();
  for (int64_t i = 0; i < got.numel(); ++i) {
    INFO("element " << i << " of " << got.shape().str());
    CHECK(g[i] == Approx(e[i]).epsilon(kTolerance).margin(kTolerance));
  }
}

Tensor uninitialised_like(const Tensor& t) { return full(t.shape(), -7.0); }  // a value no kernel writes

// ----- banded convolution -----

struct ConvCase {
  int64_t batch, length, heads, per_head, kernel, padding_left;
  bool shared;
};

BandShape band_shape(const ConvCase& c) {
  return {c.batch * c.length, int(c.length),  int(c.heads * c.per_head), int(c.heads),
          int(c.kernel),      int(c.per_head), int(c.padding_left),     c.shared};
}

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> cases;
  for (const bool shared : {true, false}) {
    for (const int64_t padding : {int64_t(0), int64_t(2), int64_t(4)})  // none, centred, causal (K − 1)
      cases.push_back({2, 7, 3, 4, 5, padding, shared});
    cases.push_back({2, 4, 2, 3, 7, 6, shared});  // K > T, causal
  }
  return cases;
}

void check_banded_conv(const ConvCase& c, Schedule schedule) {
  INFO("B " << c.batch << " T " << c.length << " H " << c.heads << " R " << c.per_head << " K " << c.kernel << " P "
            << c.padding_left << (c.shared ? " shared" : " per-position") << " taps");
  const int64_t channels = c.heads * c.per_head;
  const Tensor u = random_tensor({c.batch, c.length, channels}, DType::Float32, 1);
  const Tensor dout = random_tensor({c.batch, c.length, channels}, DType::Float32, 2);
  const Shape tap_shape = c.shared ? Shape{c.heads, c.kernel} : Shape{c.batch, c.length, c.heads, c.kernel};
  const Tensor w = random_tensor(tap_shape, DType::Float32, 3, 0.0, 1.0);
  const BandShape s = band_shape(c);
  const LaunchConfig elementwise{.grid = {2}, .block = {32}, .schedule = schedule};  // fewer threads than elements

  const Tensor out = uninitialised_like(u);
  launch(elementwise, banded_conv_kernel, u.data<float>(), w.data<float>(), out.data<float>(), s);
  check_close(out, ops::banded_conv(u, w, c.padding_left));

  const ops::BandedConvGrads expected = ops::banded_conv_backward(u, w, dout, c.padding_left);
  const Tensor du = uninitialised_like(u), dw = uninitialised_like(w);
  launch(elementwise, banded_conv_input_grad_kernel, w.data<float>(), dout.data<float>(), du.data<float>(), s);
  check_close(du, expected.du);
  if (!c.shared) {
    launch(elementwise, banded_conv_position_tap_grad_kernel, u.data<float>(), dout.data<float>(), dw.data<float>(),
           s);
  } else {
    const int rows_per_chunk = 3;  // several chunks, the last one short
    const int chunks = int((s.rows + rows_per_chunk - 1) / rows_per_chunk), taps = int(c.heads * c.kernel);
    std::vector<double> partial(size_t(chunks * taps), -7.0);
    launch(LaunchConfig{.grid = {unsigned(chunks), unsigned(taps)}, .block = {64}, .shared_bytes = 32 * sizeof(double),
                        .schedule = schedule},
           banded_conv_shared_tap_partials_kernel, u.data<float>(), dout.data<float>(), partial.data(), s,
           rows_per_chunk);
    launch(LaunchConfig{.grid = {1}, .block = {32}, .schedule = schedule}, banded_conv_shared_tap_sum_kernel,
           static_cast<const double*>(partial.data()), dw.data<float>(), taps, chunks);
  }
  check_close(dw, expected.dw);
}

// ----- the scans -----

struct ScanCase {
  int value_rows, chunk;  // the launch's split: value rows (warps) per block, steps per recomputed chunk
};

// value rows 2 of N 5: three slices, the last half empty, five chunks of 8 for T 37; value
// rows 6: one slice with an idle warp, one chunk.
const ScanCase kScanCases[] = {{2, 8}, {6, 64}};
constexpr int64_t kRows = 2, kLength = 37, kFeatures = 40, kValues = 5;  // M 40: a lane holds 1 or 2 features

ScanShape scan_shape(const ScanCase& c) {
  return {int(kRows), int(kLength), int(kFeatures), int(kValues), c.value_rows, c.chunk};
}
int slices_of(const ScanCase& c) { return scan_shape(c).slices(); }

LaunchConfig forward_launch(const ScanCase& c, Schedule schedule) {
  const ScanShape s = scan_shape(c);
  return {.grid = {unsigned(kRows), unsigned(s.slices())},
          .block = {unsigned(32 * c.value_rows)},
          .shared_bytes = size_t(s.slice_floats()) * sizeof(float),
          .schedule = schedule};
}
LaunchConfig backward_launch(const ScanCase& c, Schedule schedule) {
  const ScanShape s = scan_shape(c);
  return {.grid = {unsigned(kRows), unsigned(s.slices())},
          .block = {unsigned(32 * c.value_rows)},
          .shared_bytes = size_t(s.backward_shared_bytes()),
          .schedule = schedule};
}

// A gradient summed over the value rows, as the backward leaves it: one plane per slice,
// added in slice order by sum_slices_kernel when there are several.
struct SlicedGradient {
  Tensor result;
  std::vector<float> planes;
  int slices;

  SlicedGradient(const Shape& shape, int slices_)
      : result(full(shape, -7.0)), planes(size_t(slices_ * shape.numel()), -7.0f), slices(slices_) {}
  float* target() { return slices == 1 ? result.data<float>() : planes.data(); }
  long long stride() const { return slices == 1 ? 0 : result.numel(); }
  const Tensor& finish(Schedule schedule) {
    if (slices > 1)
      launch(LaunchConfig{.grid = {2}, .block = {32}, .schedule = schedule}, sum_slices_kernel,
             static_cast<const float*>(planes.data()), result.data<float>(), (long long)result.numel(), slices);
    return result;
  }
};

std::vector<float> boundary_scratch(const ScanCase& c) {
  return std::vector<float>(size_t(kRows * scan_shape(c).chunks() * kValues * kFeatures), -7.0f);
}

const Shape kKeyShape{kRows, kLength, kFeatures}, kValueShape{kRows, kLength, kValues},
    kStateShape{kRows, kValues, kFeatures};

void check_gated_linear_attention(const ScanCase& c, bool value_gate, bool key_gate, Schedule schedule) {
  INFO("value rows per block " << c.value_rows << ", chunk " << c.chunk << (value_gate ? ", value gate" : "")
                               << (key_gate ? ", key gate" : ""));
  const Tensor q = random_tensor(kKeyShape, DType::Float32, 11, -0.5, 0.5);
  const Tensor k = random_tensor(kKeyShape, DType::Float32, 12, -0.5, 0.5);
  const Tensor v = random_tensor(kValueShape, DType::Float32, 13);
  const Tensor a = value_gate ? random_tensor(kValueShape, DType::Float32, 14, 0.5, 1.0) : Tensor();
  const Tensor b = key_gate ? random_tensor(kKeyShape, DType::Float32, 15, 0.5, 1.0) : Tensor();
  const Tensor dy = random_tensor(kValueShape, DType::Float32, 16);
  const Tensor initial = random_tensor(kStateShape, DType::Float32, 17);
  const GatedInputs in{q.data<float>(), k.data<float>(), v.data<float>(), a.defined() ? a.data<float>() : nullptr,
                       b.defined() ? b.data<float>() : nullptr};
  const ScanShape s = scan_shape(c);

  const ops::GatedLinearAttentionResult expected = ops::gated_linear_attention(q, k, v, a, b, initial);
  const Tensor state = initial.clone(), y = uninitialised_like(v);
  launch(forward_launch(c, schedule), gated_linear_attention_kernel, in, state.data<float>(), y.data<float>(), s);
  check_close(y, expected.y);
  check_close(state, expected.state);

  const ops::GatedLinearAttentionGrads grads = ops::gated_linear_attention_backward(q, k, v, a, b, dy);
  SlicedGradient dq(kKeyShape, slices_of(c)), dk(kKeyShape, slices_of(c)), db(kKeyShape, slices_of(c));
  const Tensor dv = uninitialised_like(v), da = uninitialised_like(v);
  std::vector<float> boundaries = boundary_scratch(c);
  const GatedGrads out{dy.data<float>(), dq.target(), dk.target(), dv.data<float>(),
                       value_gate ? da.data<float>() : nullptr, key_gate ? db.target() : nullptr, dq.stride()};
  launch(backward_launch(c, schedule), gated_linear_attention_backward_kernel, in, out, boundaries.data(), s);
  check_close(dq.finish(schedule), grads.dq);
  check_close(dk.finish(schedule), grads.dk);
  check_close(dv, grads.dv);
  if (value_gate) check_close(da, grads.da);
  if (key_gate) check_close(db.finish(schedule), grads.db);
}

void check_delta_rule(const ScanCase& c, Schedule schedule) {
  INFO("value rows per block " << c.value_rows << ", chunk " << c.chunk);
  const Tensor q = random_tensor(kKeyShape, DType::Float32, 21, -0.5, 0.5);
  const Tensor k = random_tensor(kKeyShape, DType::Float32, 22, -0.2, 0.2);  // β‖k‖² < 2: W stays bounded
  const Tensor v = random_tensor(kValueShape, DType::Float32, 23);
  const Tensor beta = random_tensor({kRows, kLength}, DType::Float32, 24, 0.1, 1.0);
  const Tensor dy = random_tensor(kValueShape, DType::Float32, 25);
  const Tensor initial = random_tensor(kStateShape, DType::Float32, 26);
  const DeltaInputs in{q.data<float>(), k.data<float>(), v.data<float>(), beta.data<float>()};
  const ScanShape s = scan_shape(c);

  const ops::DeltaRuleResult expected = ops::delta_rule(q, k, v, beta, initial);
  const Tensor state = initial.clone(), y = uninitialised_like(v);
  launch(forward_launch(c, schedule), delta_rule_kernel, in, state.data<float>(), y.data<float>(), s);
  check_close(y, expected.y);
  check_close(state, expected.state);

  const ops::DeltaRuleGrads grads = ops::delta_rule_backward(q, k, v, beta, dy);
  SlicedGradient dq(kKeyShape, slices_of(c)), dk(kKeyShape, slices_of(c)), dbeta(Shape{kRows, kLength}, slices_of(c));
  const Tensor dv = uninitialised_like(v);
  std::vector<float> boundaries = boundary_scratch(c);
  const DeltaGrads out{dy.data<float>(), dq.target(),  dk.target(),     dv.data<float>(),
                       dbeta.target(),   dq.stride(), dbeta.stride()};
  launch(backward_launch(c, schedule), delta_rule_backward_kernel, in, out, boundaries.data(), s);
  check_close(dq.finish(schedule), grads.dq);
  check_close(dk.finish(schedule), grads.dk);
  check_close(dv, grads.dv);
  check_close(dbeta.finish(schedule), grads.dbeta);
}

}  // namespace

TEST_CASE("cuda banded_conv kernels match the CPU backend for shared and per-position taps", "[cuda_kernels]") {
  for (const ConvCase& c : conv_cases())
    for (const Schedule schedule : kSchedules) check_banded_conv(c, schedule);
}

TEST_CASE("cuda gated linear attention kernels match the CPU backend with and without gates", "[cuda_kernels]") {
  for (const ScanCase& c : kScanCases)
    for (const bool value_gate : {false, true})
      for (const bool key_gate : {false, true})
        for (const Schedule schedule : kSchedules) check_gated_linear_attention(c, value_gate, key_gate, schedule);
}

TEST_CASE("cuda delta rule kernels match the CPU backend", "[cuda_kernels]") {
  for (const ScanCase& c : kScanCases)
    for (const Schedule schedule : kSchedules) check_delta_rule(c, schedule);
}

TEST_CASE("plan_scan splits a scan within 48 KiB of shared memory and names a state too wide", "[cuda_kernels]") {
  using attn::cuda::kScanSharedBudget;
  const ScanShape heads = attn::cuda::plan_scan("delta_rule", 256, 100, 64, 64);  // d 64 heads
  CHECK(heads.value_rows == 16);
  CHECK(heads.slices() == 4);
  CHECK(heads.chunk == 7);  // (48 KiB − 12 KiB of partials) / 4 KiB per state − the gradient state and S_{t0−1}
  CHECK(heads.backward_shared_bytes() <= kScanSharedBudget);
  CHECK(attn::cuda::scan_scratch_floats(heads) == 256LL * heads.chunks() * 64 * 64 + 3LL * 4 * 256 * 100 * 64);

  const ScanShape short_rows = attn::cuda::plan_scan("delta_rule", 8, 5, 16, 3);  // one slice, one chunk of T
  CHECK(short_rows.value_rows == 3);
  CHECK(short_rows.chunk == 5);
  CHECK(attn::cuda::scan_scratch_floats(short_rows) == 8LL * 3 * 16);  // the boundaries alone

  const ScanShape wide = attn::cuda::plan_scan("gated_linear_attention", 4, 300, 1500, 64);  // fewer warps per block
  CHECK(wide.value_rows < 16);
  CHECK(wide.chunk >= 1);
  CHECK(wide.backward_shared_bytes() <= kScanSharedBudget);
  CHECK_THROWS_WITH(attn::cuda::plan_scan("gated_linear_attention", 4, 300, 5000, 64),
                    Catch::Contains("gated_linear_attention") && Catch::Contains("M = 5000 is too wide"));
}
