// The CUDA backend against the CPU backend on the same data, in two programs built from this
// file (tests/CMakeLists.txt): on a real GPU (skipped, with the reason, where there is none;
// gpu_test_main.cpp) and on the emulated CUDA runtime (cuda/emulator/runtime/), which runs it
// in the normal suite (emulated_runtime_main.cpp).
//
// Raw kernels: copies both ways and strided, fill of every dtype, the unary and (broadcast)
// binary ops, bias + ReLU, row gathers, random draws and dropout (the CPU's numbers and
// masks), reductions, softmax, layer norm and their backward, the cross entropy, the
// optimizer updates and gradient norm, products with plain, transposed, broadcast and
// head-interleaved operands, the attention variants' kernels (banded convolution, gated
// linear attention, delta rule) and their backward, and that it implements every kernel of
// the table. Then every differentiable op of autograd/ops.hpp (and the fused attention)
// forward and backward on both devices — outputs and the gradients of every input; the
// attention fused (attention_forward) and composed (with dropout) — and a
// Transformer encoder layer built from them, forward and backward.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/fused/scaled_dot_product.hpp"
#include "autograd/ops.hpp"
#include "core/backend.hpp"
#include "core/ops.hpp"
#include "core/ops_update.hpp"
#include "core/profiler.hpp"
#include "cuda/device_info.hpp"

using namespace attn;

namespace {

const Device kGpu = Device::cuda(0);

Tensor varied(const Shape& shape, double low, double high) {
  Tensor t = zeros(shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = float(low + (high - low) * (0.5 + 0.5 * std::sin(1.3 * double(i))));
  return t;
}

// Compares values of any dtype (as float64) after bringing the GPU's back to the host.
void check_close(const Tensor& gpu, const Tensor& cpu, double tolerance) {
  REQUIRE(gpu.device() == kGpu);
  REQUIRE(gpu.dtype() == cpu.dtype());
  const Tensor back = gpu.to(Device::cpu()).to(DType::Float64).contiguous();
  const Tensor expected = cpu.to(DType::Float64).contiguous();
  REQUIRE(back.shape() == expected.shape());
  for (int64_t i = 0; i < back.numel(); ++i) {
    INFO("element " << i);
    CHECK(back.data<double>()[i] == Approx(expected.data<double>()[i]).epsilon(tolerance).margin(tolerance));
  }
}

using Inputs = std::vector<Tensor>;
using DifferentiableOp = std::function<Tensor(const Inputs&)>;

// Runs `op` on the CPU inputs and on their copies on the GPU, float inputs requiring grad;
// compares the outputs, then the gradients of every float input of Σ out ⊙ w (w fixed and
// varied), which autograd computes with each device's kernels.
void check_op(const DifferentiableOp& op, const Inputs& inputs, double tolerance) {
  Inputs cpu, gpu;
  for (const Tensor& x : inputs) {
    Tensor on_cpu = x.clone(), on_gpu = x.to(kGpu);
    if (x.dtype() == DType::Float32) {
      set_requires_grad(on_cpu);
      set_requires_grad(on_gpu);
    }
    cpu.push_back(on_cpu);
    gpu.push_back(on_gpu);
  }
  const Tensor cpu_out = op(cpu), gpu_out = op(gpu);
  {
    INFO("forward");
    check_close(gpu_out, cpu_out, tolerance);
  }
  REQUIRE(requires_grad(gpu_out) == requires_grad(cpu_out));
  if (!requires_grad(cpu_out)) return;
  const Tensor w = varied(cpu_out.shape(), -1, 1);
  backward(sum(cpu_out * w));
  backward(sum(gpu_out * w.to(kGpu)));
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!requires_grad(cpu[i])) continue;
    INFO("the gradient of input " << i);
    REQUIRE(grad(gpu[i]).defined() == grad(cpu[i]).defined());
    if (grad(cpu[i]).defined()) check_close(grad(gpu[i]), grad(cpu[i]), tolerance);
  }
}

}  // namespace

TEST_CASE("tensors go to the GPU and back unchanged", "[cuda]") {
  const Tensor x = varied({7, 5}, -3, 3);
  const Tensor on_gpu = x.to(kGpu);
  CHECK(on_gpu.device() == kGpu);
  check_close(on_gpu, x, 0.0);
  check_close(full({3, 3}, 2.5, DType::Float32, kGpu), full({3, 3}, 2.5), 0.0);
  check_close(on_gpu.transpose(0, 1).contiguous(), x.transpose(0, 1).contiguous(), 0.0);  // a strided copy
}

TEST_CASE("unary ops, sums, softmax and layer norm on the GPU match the CPU", "[cuda]") {
  const Tensor x = varied({6, 300}, -4, 4);
  const Tensor g = x.to(kGpu);
  for (UnaryOp op : {UnaryOp::Exp, UnaryOp::Tanh, UnaryOp::Relu, UnaryOp::Gelu, UnaryOp::Sigmoid})
    check_close(ops::unary(op, g), ops::unary(op, x), 1e-5);
  check_close(ops::sum(g, {1}), ops::sum(x, {1}), 1e-4);
  check_close(ops::sum(g, {0}), ops::sum(x, {0}), 1e-4);  // over the rows: the general reduction
  check_close(ops::amax(g.transpose(0, 1), {1}), ops::amax(x.transpose(0, 1), {1}), 0.0);
  const Tensor column = varied({6, 1}, 1, 2);  // broadcast along the rows
  check_close(ops::binary(BinaryOp::Div, g, column.to(kGpu)), ops::binary(BinaryOp::Div, x, column), 1e-6);
  check_close(ops::softmax(g, -1), ops::softmax(x, -1), 1e-5);
  check_close(ops::log_softmax(g, -1), ops::log_softmax(x, -1), 1e-5);
  const Tensor gamma = varied({300}, 0.5, 1.5), beta = varied({300}, -1, 1);
  const ops::LayerNormResult cpu = ops::layer_norm(x, gamma, beta, 1e-5);
  const ops::LayerNormResult gpu = ops::layer_norm(g, gamma.to(kGpu), beta.to(kGpu), 1e-5);
  check_close(gpu.out, cpu.out, 1e-5);
  check_close(gpu.rstd, cpu.rstd, 1e-5);
  const Tensor dy = varied({6, 300}, -1, 1);
  const ops::LayerNormGrads cpu_grads = ops::layer_norm_backward(dy, x, gamma, cpu.mean, cpu.rstd, true);
  const ops::LayerNormGrads gpu_grads =
      ops::layer_norm_backward(dy.to(kGpu), g, gamma.to(kGpu), gpu.mean, gpu.rstd, true);
  check_close(gpu_grads.dx, cpu_grads.dx, 1e-5);
  check_close(gpu_grads.dgamma, cpu_grads.dgamma, 1e-4);
  check_close(gpu_grads.dbeta, cpu_grads.dbeta, 1e-4);
  const Tensor y = ops::softmax(x, -1);
  check_close(ops::softmax_backward(y.to(kGpu), dy.to(kGpu), -1, false), ops::softmax_backward(y, dy, -1, false), 1e-5);
}

TEST_CASE("backward of unary ops, bias + ReLU and embeddings on the GPU match the CPU", "[cuda]") {
  const Tensor x = varied({4, 96}, -3, 3), dy = varied({4, 96}, -1, 1), bias = varied({96}, -1, 1);
  const Tensor y = ops::unary(UnaryOp::Gelu, x);
  check_close(ops::unary_backward(UnaryOp::Gelu, x.to(kGpu), y.to(kGpu), dy.to(kGpu)),
              ops::unary_backward(UnaryOp::Gelu, x, y, dy), 1e-5);
  const Tensor cpu_relu = x.clone(), gpu_relu = x.to(kGpu);
  ops::bias_relu_(cpu_relu, bias);
  ops::bias_relu_(gpu_relu, bias.to(kGpu));
  check_close(gpu_relu, cpu_relu, 0.0);
  const ops::BiasReluGrads cpu = ops::bias_relu_backward(cpu_relu, dy, true);
  const ops::BiasReluGrads gpu = ops::bias_relu_backward(gpu_relu, dy.to(kGpu), true);
  check_close(gpu.dz, cpu.dz, 0.0);
  check_close(gpu.dbias, cpu.dbias, 1e-5);
  const Tensor indices = from_vector<int64_t>({2, 0, 2, 3}, Shape{4});
  check_close(ops::index_select(x.to(kGpu), 0, indices.to(kGpu)), ops::index_select(x, 0, indices), 0.0);
  // Rows of any dtype: a beam search reorders boolean padding masks and int64 tokens.
  const Tensor mask = ops::gt(x, 0.0), tokens = from_vector<int64_t>({7, -3, 1LL << 40, 5}, Shape{4});
  CHECK(ops::index_select(mask.to(kGpu), 0, indices.to(kGpu)).to_vector() ==
        ops::index_select(mask, 0, indices).to_vector());
  CHECK(ops::index_select(tokens.to(kGpu), 0, indices.to(kGpu)).to_vector() ==
        ops::index_select(tokens, 0, indices).to_vector());
}

TEST_CASE("bias gradients and embedding gradients on the GPU match the CPU at a training batch's size", "[cuda]") {
  // 4,096 rows: column sums in many chunks of rows; a [B, T, C] sum over B and T alike.
  const Tensor rows = varied({4096, 300}, -1, 1), batch = varied({16, 33, 70}, -1, 1);
  check_close(ops::sum(rows.to(kGpu), {0}), ops::sum(rows, {0}), 1e-4);
  check_close(ops::sum(batch.to(kGpu), {0, 1}), ops::sum(batch, {0, 1}), 1e-5);
  // 4,096 tokens of a 50-word vocabulary: every row repeated, added in token order on both
  // devices, so bit for bit.
  std::vector<int64_t> tokens(4096);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int64_t((i * 7919) % 50);
  const Tensor indices = from_vector<int64_t>(tokens, Shape{4096}), dy = varied({4096, 40}, -1, 1);
  check_close(ops::embedding_backward(dy.to(kGpu), indices.to(kGpu), 50), ops::embedding_backward(dy, indices, 50), 0.0);
}

TEST_CASE("a device index out of range is an error at the next read-back, never a read out of bounds", "[cuda]") {
  const Tensor table = varied({5, 8}, -1, 1).to(kGpu);
  const Tensor looked_up = ops::embedding(table, from_vector<int64_t>({1, 5, 2}, Shape{3}, kGpu));  // 5 >= 5 rows
  CHECK_THROWS_WITH(looked_up.to_vector(), Catch::Contains("embedding: an index out of range [0, 5)"));
  // The failed check was consumed: the next lookup and read-back are fine.
  const Tensor good = ops::embedding(table, from_vector<int64_t>({1, 4}, Shape{2}, kGpu));
  CHECK(good.to_vector() == ops::embedding(table.to(Device::cpu()), from_vector<int64_t>({1, 4}, Shape{2})).to_vector());
}

TEST_CASE("optimizer steps and gradient clipping on the GPU match the CPU", "[cuda]") {
  // 40 parameters (more than one launch's group) of sizes from none to several blocks.
  std::vector<AdamTensors> cpu_group, gpu_group;
  std::vector<Tensor> cpu_grads, gpu_grads;
  for (int t = 0; t < 40; ++t) {
    const int64_t n = (t * 1237) % 9001;
    const AdamUpdate adam{.beta1 = 0.9f, .beta2 = 0.98f, .one_minus_beta1 = 0.1f, .one_minus_beta2 = 0.02f,
                          .eps = 1e-8f, .decay = -1e-4f, .neg_step_size = -1e-3f * float(1 + t % 3), .decays = t % 2 == 0};
    const Tensor grad = varied({n}, -1, 1), param = varied({n}, -2, 2), m = zeros({n}), v = zeros({n});
    cpu_group.push_back({param, grad, m, v, adam});
    gpu_group.push_back({param.to(kGpu), grad.to(kGpu), m.to(kGpu), v.to(kGpu), adam});
    cpu_grads.push_back(grad);
    gpu_grads.push_back(gpu_group.back().grad);
  }
  ops::adam_update_(cpu_group);
  ops::adam_update_(gpu_group);
  for (size_t t = 0; t < cpu_group.size(); ++t) {
    check_close(gpu_group[t].param, cpu_group[t].param, 1e-6);
    check_close(gpu_group[t].exp_avg_sq, cpu_group[t].exp_avg_sq, 1e-6);
  }
  const Tensor cpu_total = zeros(Shape{}, DType::Float64), gpu_total = zeros(Shape{}, DType::Float64, kGpu);
  ops::add_sum_of_squares_(cpu_total, cpu_grads);
  ops::add_sum_of_squares_(gpu_total, gpu_grads);
  CHECK(gpu_total.to(Device::cpu()).item() == Approx(cpu_total.item()).epsilon(1e-12));
}

TEST_CASE("random tensors on the GPU hold the CPU's numbers", "[cuda]") {
  Generator cpu_gen(11), gpu_gen(11);
  check_close(uniform({40, 30}, -1.0, 1.0, DType::Float32, &gpu_gen, kGpu),
              uniform({40, 30}, -1.0, 1.0, DType::Float32, &cpu_gen), 0.0);
  check_close(normal({41}, 0.0, 2.0, DType::Float32, &gpu_gen, kGpu), normal({41}, 0.0, 2.0, DType::Float32, &cpu_gen),
              1e-5);
}

TEST_CASE("dropout on the GPU draws the CPU's mask, bit for bit", "[cuda]") {
  const Tensor x = varied({5, 400}, -2, 2);
  Generator cpu_gen(7), gpu_gen(7);
  const ops::DropoutResult cpu = ops::dropout(x, 0.3, &cpu_gen);
  const ops::DropoutResult gpu = ops::dropout(x.to(kGpu), 0.3, &gpu_gen);
  const Tensor mask = gpu.mask.to(Device::cpu());
  CHECK(std::equal(mask.data<bool>(), mask.data<bool>() + mask.numel(), cpu.mask.data<bool>()));
  check_close(gpu.out, cpu.out, 0.0);
  check_close(ops::dropout_backward(x.to(kGpu), gpu.mask, 0.3), ops::dropout_backward(x, cpu.mask, 0.3), 0.0);
}

TEST_CASE("matrix products on the GPU (cuBLAS) match the CPU", "[cuda]") {
  const Tensor a = varied({3, 17, 9}, -1, 1), b = varied({3, 9, 11}, -1, 1);
  check_close(ops::matmul(a.to(kGpu), b.to(kGpu)), ops::matmul(a, b), 1e-4);
  const Tensor b_rows = varied({3, 11, 9}, -1, 1);  // b as a transposed view, on both devices
  check_close(ops::matmul(a.to(kGpu), b_rows.to(kGpu).transpose(1, 2)), ops::matmul(a, b_rows.transpose(1, 2)), 1e-4);
  const Tensor w = varied({9, 4}, -1, 1);  // one matrix broadcast over the batch (batch stride 0)
  check_close(ops::matmul(a.to(kGpu), w.to(kGpu)), ops::matmul(a, w), 1e-4);
  // Attention's products: heads split out of [B, T, H, d] as [B, H, T, d] views (two batch dims).
  const Tensor q = varied({2, 5, 3, 4}, -1, 1).permute({0, 2, 1, 3});
  const Tensor kt = varied({2, 5, 3, 4}, -1, 1).permute({0, 2, 3, 1});
  check_close(ops::matmul(q.contiguous().to(kGpu).view({2, 3, 5, 4}), kt.contiguous().to(kGpu).view({2, 3, 4, 5})),
              ops::matmul(q, kt), 1e-4);
  check_close(ops::matmul(varied({2, 5, 3, 4}, -1, 1).to(kGpu).permute({0, 2, 1, 3}),
                          varied({2, 5, 3, 4}, -1, 1).to(kGpu).permute({0, 2, 3, 1})),
              ops::matmul(q, kt), 1e-4);
  // More sequences than heads: one batch of every (sequence, head) matrix all the same.
  const Tensor q5 = varied({5, 4, 2, 3}, -1, 1).permute({0, 2, 1, 3}), kt5 = varied({5, 4, 2, 3}, 0, 1).permute({0, 2, 3, 1});
  check_close(ops::matmul(varied({5, 4, 2, 3}, -1, 1).to(kGpu).permute({0, 2, 1, 3}),
                          varied({5, 4, 2, 3}, 0, 1).to(kGpu).permute({0, 2, 3, 1})),
              ops::matmul(q5, kt5), 1e-4);
  // Two batch dims with one operand broadcast over both, and accumulating into a strided out
  // (alpha, beta): out = 0.5 · q5 · w + out.
  const Tensor w4 = varied({3, 6}, -1, 1);
  const Tensor out_start = varied({5, 4, 2, 6}, -1, 1);
  const Tensor out_cpu = out_start.clone().permute({0, 2, 1, 3}), out_gpu = out_start.to(kGpu).permute({0, 2, 1, 3});
  ops::matmul_into(q5, w4.expand({5, 2, 3, 6}), out_cpu, 0.5, 1.0);
  ops::matmul_into(q5.to(kGpu), w4.to(kGpu).expand({5, 2, 3, 6}), out_gpu, 0.5, 1.0);
  check_close(out_gpu.contiguous(), out_cpu.contiguous(), 1e-4);
}

TEST_CASE("the label-smoothed cross entropy on the GPU matches the CPU and names a bad target", "[cuda]") {
  const Tensor logits = varied({8, 500}, -5, 5);
  const Tensor targets = from_vector<int64_t>({3, 1, 499, 0, 17, 1, 250, 9}, Shape{8});
  const ops::CrossEntropyResult cpu = ops::label_smoothed_cross_entropy(logits, targets, 0.1, 1, /*with_grad=*/true);
  const ops::CrossEntropyResult gpu =
      ops::label_smoothed_cross_entropy(logits.to(kGpu), targets.to(kGpu), 0.1, 1, /*with_grad=*/true);
  CHECK(gpu.loss.to(Device::cpu()).item() == Approx(cpu.loss.item()).epsilon(1e-6));
  CHECK(gpu.count == cpu.count);
  check_close(gpu.grad, cpu.grad, 1e-6);
  const Tensor bad = from_vector<int64_t>({3, 1, 500, 0, 17, 1, 250, 9}, Shape{8}).to(kGpu);
  CHECK_THROWS_WITH(ops::label_smoothed_cross_entropy(logits.to(kGpu), bad, 0.1, 1),
                    Catch::Contains("target 500 at position 2 is out of range"));
}

TEST_CASE("where, arg-max, running sums, gather_last and top-k on the GPU match the CPU", "[cuda]") {
  const Tensor x = varied({6, 50}, -3, 3), mask = ops::binary(BinaryOp::Gt, x, zeros({6, 50}));
  check_close(ops::where(mask.to(kGpu), x.to(kGpu), zeros({6, 50}, DType::Float32, kGpu)),
              ops::where(mask, x, zeros({6, 50})), 0.0);
  check_close(ops::cumsum(x.to(kGpu), 1), ops::cumsum(x, 1), 1e-5);
  const ops::ValuesIndices cpu_max = ops::max(x, 1), gpu_max = ops::max(x.to(kGpu), 1);
  check_close(gpu_max.values, cpu_max.values, 0.0);
  const ops::ValuesIndices cpu_top = ops::topk(x, 4), gpu_top = ops::topk(x.to(kGpu), 4);
  check_close(gpu_top.values, cpu_top.values, 0.0);
}

TEST_CASE("the banded convolution on the GPU matches the CPU, shared and per-position taps", "[cuda]") {
  const int64_t batch = 2, length = 70, heads = 4, per_head = 8, kernel = 7;  // 140 rows: several tap chunks
  const Tensor u = varied({batch, length, heads * per_head}, -1, 1);
  const Tensor dout = varied({batch, length, heads * per_head}, -2, 2);
  for (const bool shared : {true, false}) {
    const Tensor w = shared ? varied({heads, kernel}, 0, 1) : varied({batch, length, heads, kernel}, 0, 1);
    for (const int64_t padding : {int64_t(0), int64_t(3), kernel - 1}) {
      INFO((shared ? "shared" : "per-position") << " taps, padding " << padding);
      check_close(ops::banded_conv(u.to(kGpu), w.to(kGpu), padding), ops::banded_conv(u, w, padding), 1e-5);
      const ops::BandedConvGrads cpu = ops::banded_conv_backward(u, w, dout, padding);
      const ops::BandedConvGrads gpu = ops::banded_conv_backward(u.to(kGpu), w.to(kGpu), dout.to(kGpu), padding);
      check_close(gpu.du, cpu.du, 1e-5);
      check_close(gpu.dw, cpu.dw, 1e-4);
    }
  }
}

TEST_CASE("gated linear attention and the delta rule on the GPU match the CPU", "[cuda]") {
  // N 20: two slices of value rows (16 and 4); T 30: five recomputed chunks of 7 (M 64).
  const int64_t rows = 2, length = 30, features = 64, values = 20;
  const Tensor q = varied({rows, length, features}, -0.5, 0.5), k = varied({rows, length + 1, features}, -0.2, 0.2)
                                                                       .narrow(1, 1, length)
                                                                       .contiguous();
  const Tensor v = varied({rows, length, values}, -1, 1), dy = varied({rows, length, values + 1}, -1, 1)
                                                                  .narrow(2, 1, values)
                                                                  .contiguous();
  const Tensor a = varied({rows, length, values}, 0.8, 1), b = varied({rows, length, features}, 0.8, 1);
  const Tensor initial = varied({rows, values, features}, -1, 1);
  const auto gpu = [](const Tensor& t) { return t.defined() ? t.to(kGpu) : Tensor(); };
  for (const bool gated : {false, true}) {
    INFO((gated ? "both gates" : "no gates"));
    const Tensor ga = gated ? a : Tensor(), gb = gated ? b : Tensor();
    const ops::GatedLinearAttentionResult cpu = ops::gated_linear_attention(q, k, v, ga, gb, initial);
    const ops::GatedLinearAttentionResult got =
        ops::gated_linear_attention(gpu(q), gpu(k), gpu(v), gpu(ga), gpu(gb), gpu(initial));
    check_close(got.y, cpu.y, 1e-4);
    check_close(got.state, cpu.state, 1e-4);
    const ops::GatedLinearAttentionGrads cpu_grads = ops::gated_linear_attention_backward(q, k, v, ga, gb, dy);
    const ops::GatedLinearAttentionGrads gpu_grads =
        ops::gated_linear_attention_backward(gpu(q), gpu(k), gpu(v), gpu(ga), gpu(gb), gpu(dy));
    check_close(gpu_grads.dq, cpu_grads.dq, 1e-4);
    check_close(gpu_grads.dk, cpu_grads.dk, 1e-4);
    check_close(gpu_grads.dv, cpu_grads.dv, 1e-4);
    if (gated) {
      check_close(gpu_grads.da, cpu_grads.da, 1e-4);
      check_close(gpu_grads.db, cpu_grads.db, 1e-4);
    }
  }
  const Tensor beta = varied({rows, length}, 0.1, 1);
  const ops::DeltaRuleResult cpu = ops::delta_rule(q, k, v, beta, initial);
  const ops::DeltaRuleResult got = ops::delta_rule(gpu(q), gpu(k), gpu(v), gpu(beta), gpu(initial));
  check_close(got.y, cpu.y, 1e-4);
  check_close(got.state, cpu.state, 1e-4);
  const ops::DeltaRuleGrads cpu_grads = ops::delta_rule_backward(q, k, v, beta, dy);
  const ops::DeltaRuleGrads gpu_grads = ops::delta_rule_backward(gpu(q), gpu(k), gpu(v), gpu(beta), gpu(dy));
  check_close(gpu_grads.dq, cpu_grads.dq, 1e-4);
  check_close(gpu_grads.dk, cpu_grads.dk, 1e-4);
  check_close(gpu_grads.dv, cpu_grads.dv, 1e-4);
  check_close(gpu_grads.dbeta, cpu_grads.dbeta, 1e-4);
}

TEST_CASE("the profiler times GPU kernels by events queued around them, without waiting for each", "[cuda]") {
  REQUIRE(profiler::device_clock(DeviceType::CUDA) != nullptr);
  const Tensor a = varied({64, 64}, -1, 1).to(kGpu);
  const auto profile = [&](profiler::KernelTiming timing) {
    profiler::reset();
    profiler::set_enabled(true, timing);
    for (int i = 0; i < 3; ++i) ops::matmul(a, a);
    ops::softmax(a, -1);
    profiler::set_enabled(false);
    std::vector<profiler::Entry> entries = profiler::snapshot();
    profiler::reset();
    return entries;
  };
  const auto find = [](const std::vector<profiler::Entry>& entries, const std::string& name) {
    auto it = std::find_if(entries.begin(), entries.end(), [&](const profiler::Entry& e) { return e.name == name; });
    return it == entries.end() ? profiler::Entry{} : *it;
  };
  for (profiler::KernelTiming timing : {profiler::KernelTiming::device, profiler::KernelTiming::host}) {
    const std::vector<profiler::Entry> entries = profile(timing);
    INFO((timing == profiler::KernelTiming::device ? "device" : "host") << " times");
    CHECK(find(entries, "batched_gemm").calls == 3);
    CHECK(find(entries, "batched_gemm").seconds > 0.0);
    CHECK(find(entries, "softmax").calls == 1);
    CHECK(find(entries, "wait for the device").calls == 0);  // neither waits after each kernel
  }
}

TEST_CASE("the CUDA backend implements every kernel of the table", "[cuda]") {
  Backend& cuda = backend_for(kGpu);
  for (size_t k = 0; k < kKernelCount; ++k) {
    INFO(kernel_name(Kernel(k)));
    CHECK(cuda.supports(Kernel(k)));
  }
}

TEST_CASE("fill and copies on the GPU handle every dtype", "[cuda]") {
  for (DType dtype : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool}) {
    INFO(dtype_name(dtype));
    check_close(full({5, 7}, 1.0, dtype, kGpu), full({5, 7}, 1.0, dtype), 0.0);
    const Tensor x = full({4, 3}, 3.0, dtype);
    check_close(x.to(kGpu).transpose(0, 1).contiguous(), x.transpose(0, 1).contiguous(), 0.0);
  }
  const Tensor counts = arange(0, 12).view({3, 4});
  check_close(ops::cumsum(counts.to(kGpu), 1, true), ops::cumsum(counts, 1, true), 0.0);
}

TEST_CASE("integer unary and binary ops on the GPU match the CPU", "[cuda]") {
  // Positions and lengths kept on the device: a causal mask's last visible key, say.
  const Tensor positions = arange(-6, 6).view({3, 4}), other = arange(0, 4).view({1, 4});
  for (DType dtype : {DType::Int64, DType::Int32}) {
    INFO(dtype_name(dtype));
    const Tensor x = positions.to(dtype), y = other.to(dtype), gx = x.to(kGpu), gy = y.to(kGpu);
    check_close(ops::add(gx, 3.0), ops::add(x, 3.0), 0.0);
    check_close(ops::mul(gx, -2.0), ops::mul(x, -2.0), 0.0);
    check_close(ops::rsub(5.0, gx), ops::rsub(5.0, x), 0.0);
    check_close(ops::neg(gx), ops::neg(x), 0.0);
    check_close(ops::abs(gx), ops::abs(x), 0.0);
    check_close(ops::clamp(gx, -2.0, 3.0), ops::clamp(x, -2.0, 3.0), 0.0);
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Maximum, BinaryOp::Minimum,
                        BinaryOp::Eq, BinaryOp::Lt, BinaryOp::Ge})
      check_close(ops::binary(op, gx, gy), ops::binary(op, x, y), 0.0);
  }
  // Masks: bool comparisons (a padding mask against 0), maximum (or) and minimum (and).
  const Tensor mask = ops::gt(positions, 0.0), other_mask = ops::lt(positions, 3.0);
  for (BinaryOp op : {BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Maximum, BinaryOp::Minimum})
    check_close(ops::binary(op, mask.to(kGpu), other_mask.to(kGpu)), ops::binary(op, mask, other_mask), 0.0);
  check_close(ops::eq(mask.to(kGpu), 0.0), ops::eq(mask, 0.0), 0.0);
  const Tensor on_gpu = positions.to(kGpu);  // the kernel itself refuses an op integers do not take
  CHECK_THROWS_WITH(backend_for(kGpu).unary(UnaryOp::Exp, on_gpu, on_gpu, {}), Catch::Contains("integer"));
}

TEST_CASE("the CUDA backend's versions name cuBLAS, cuDNN and NCCL", "[cuda]") {
  const std::string versions = cuda::versions();
  CHECK_THAT(versions, Catch::Contains("cuBLAS ") && Catch::Contains("cuDNN not used") && Catch::Contains("NCCL "));
}

TEST_CASE("element-wise ops on the GPU match the CPU, forward and backward", "[cuda]") {
  const Tensor x = varied({3, 70}, -2, 2), positive = varied({3, 70}, 0.2, 3);
  const std::vector<std::pair<const char*, DifferentiableOp>> on_any = {
      {"neg", [](const Inputs& in) { return neg(in[0]); }},
      {"abs", [](const Inputs& in) { return abs(in[0]); }},
      {"exp", [](const Inputs& in) { return exp(in[0]); }},
      {"relu", [](const Inputs& in) { return relu(in[0]); }},
      {"elu", [](const Inputs& in) { return elu(in[0], 0.7); }},
      {"gelu", [](const Inputs& in) { return gelu(in[0]); }},
      {"sigmoid", [](const Inputs& in) { return sigmoid(in[0]); }},
      {"tanh", [](const Inputs& in) { return tanh(in[0]); }},
      {"sin", [](const Inputs& in) { return sin(in[0]); }},
      {"cos", [](const Inputs& in) { return cos(in[0]); }},
      {"pow 3", [](const Inputs& in) { return pow(in[0], 3.0); }},
      {"clamp", [](const Inputs& in) { return clamp(in[0], -1.0, 0.5); }},
      {"scalars", [](const Inputs& in) { return (2.0 - in[0] * 3.0) / 4.0 + 1.0; }},
      {"scalar over", [](const Inputs& in) { return 1.0 / (in[0] * in[0] + 1.0); }},
  };
  for (const auto& [name, op] : on_any) {
    INFO(name);
    check_op(op, {x}, 1e-5);
  }
  const std::vector<std::pair<const char*, DifferentiableOp>> on_positive = {
      {"log", [](const Inputs& in) { return log(in[0]); }},
      {"sqrt", [](const Inputs& in) { return sqrt(in[0]); }},
      {"rsqrt", [](const Inputs& in) { return rsqrt(in[0]); }},
      {"pow 0.5", [](const Inputs& in) { return pow(in[0], 0.5); }},
  };
  for (const auto& [name, op] : on_positive) {
    INFO(name);
    check_op(op, {positive}, 1e-5);
  }
}

TEST_CASE("binary ops with broadcasting, where and masked_fill on the GPU match the CPU, forward and backward",
          "[cuda]") {
  const Tensor a = varied({4, 1, 6}, -2, 2), b = varied({5, 1}, 0.5, 2.5);
  const std::vector<std::pair<const char*, DifferentiableOp>> binary_ops = {
      {"add", [](const Inputs& in) { return in[0] + in[1]; }},
      {"sub", [](const Inputs& in) { return in[0] - in[1]; }},
      {"mul", [](const Inputs& in) { return in[0] * in[1]; }},
      {"div", [](const Inputs& in) { return in[0] / in[1]; }},
      {"maximum", [](const Inputs& in) { return maximum(in[0], in[1]); }},
      {"minimum", [](const Inputs& in) { return minimum(in[0], in[1]); }},
  };
  for (const auto& [name, op] : binary_ops) {
    INFO(name);
    check_op(op, {a, b}, 1e-5);
  }
  for (BinaryOp comparison : {BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge})
    check_close(ops::binary(comparison, a.to(kGpu), b.to(kGpu)), ops::binary(comparison, a, b), 0.0);
  const Tensor mask = ops::gt(varied({5, 6}, -1, 1), 0.0);
  check_op([](const Inputs& in) { return where(in[2], in[0], in[1]); }, {a, b, mask}, 1e-6);
  check_op([](const Inputs& in) { return masked_fill(in[0], in[1], -7.0); }, {a, ops::gt(varied({1, 6}, -1, 1), 0.0)},
           1e-6);
}

TEST_CASE("reductions on the GPU match the CPU over any dims, forward and backward", "[cuda]") {
  const Tensor x = varied({3, 4, 5}, -2, 2);
  // All dims, the last (one block per row), the first, two of three; keepdim once.
  const std::vector<std::pair<std::vector<int64_t>, bool>> cases = {
      {{}, false}, {{2}, false}, {{0}, true}, {{0, 2}, false}};
  for (const auto& [dims, keepdim] : cases) {
    INFO("reducing " << dims.size() << " dim(s) from " << (dims.empty() ? -1 : dims[0]) << ", keepdim " << keepdim);
    check_op([&](const Inputs& in) { return sum(in[0], dims, keepdim); }, {x}, 1e-5);
    check_op([&](const Inputs& in) { return mean(in[0], dims, keepdim); }, {x}, 1e-5);
    check_op([&](const Inputs& in) { return amax(in[0], dims, keepdim); }, {x}, 1e-6);
    check_op([&](const Inputs& in) { return amin(in[0], dims, keepdim); }, {x}, 1e-6);
    check_op([&](const Inputs& in) { return logsumexp(in[0], dims, keepdim); }, {x}, 1e-5);
    check_op([&](const Inputs& in) { return norm(in[0], dims, keepdim); }, {x}, 1e-5);
  }
  // Few outputs of many elements (a bias gradient's column sums): summed in chunks, then the
  // chunks in order; over one dim and over two.
  for (const auto& [shape, dims] : {std::pair{Shape{300, 6}, std::vector<int64_t>{0}},
                                    std::pair{Shape{40, 5, 3}, std::vector<int64_t>{0, 1}}}) {
    const Tensor tall = varied(shape, -2, 2);
    INFO("summing " << shape.str() << " over " << dims.size() << " dim(s)");
    check_op([&](const Inputs& in) { return sum(in[0], dims, false); }, {tall}, 1e-5);
    check_op([&](const Inputs& in) { return mean(in[0], dims, false); }, {tall}, 1e-5);
    check_op([&](const Inputs& in) { return norm(in[0], dims, false); }, {tall}, 1e-5);
  }
  // Extrema and products of few outputs are split into chunks too (the whole batch's maximum
  // in a token-id range check: one output of 4,096 elements), a NaN still winning.
  for (const auto& [shape, dims] : {std::pair{Shape{300, 6}, std::vector<int64_t>{0}},
                                    std::pair{Shape{64, 64}, std::vector<int64_t>{}}}) {
    Tensor tall = varied(shape, -2, 2);
    INFO("extrema of " << shape.str() << " over " << (dims.empty() ? "every" : "the first") << " dim");
    check_op([&](const Inputs& in) { return amax(in[0], dims, false); }, {tall}, 0.0);
    check_op([&](const Inputs& in) { return amin(in[0], dims, false); }, {tall}, 0.0);
    tall.data<float>()[tall.numel() / 2 + 1] = NAN;
    for (const Tensor& extremum : {ops::amax(tall.to(kGpu), dims), ops::amin(tall.to(kGpu), dims)}) {
      const std::vector<double> got = extremum.to(Device::cpu()).to_vector();
      CHECK(std::count_if(got.begin(), got.end(), [](double v) { return std::isnan(v); }) == 1);
    }
  }
  const Tensor factors = varied({300, 2}, 0.95, 1.05);
  const Tensor cpu_product(Shape{1, 2}), gpu_product(Shape{1, 2}, DType::Float32, kGpu);
  backend_for(Device::cpu()).reduce(ReduceOp::Prod, factors, cpu_product);
  backend_for(kGpu).reduce(ReduceOp::Prod, factors.to(kGpu), gpu_product);
  check_close(gpu_product, cpu_product, 1e-5);
  for (bool reverse : {false, true})
    check_op([&](const Inputs& in) { return cumsum(in[0], 1, reverse); }, {x}, 1e-5);
  const ops::ValuesIndices cpu_min = ops::min(x, 1), gpu_min = ops::min(x.to(kGpu), 1);
  check_close(gpu_min.values, cpu_min.values, 0.0);
  check_close(gpu_min.indices, cpu_min.indices, 0.0);
  check_close(ops::argmax(x.to(kGpu), 2, true), ops::argmax(x, 2, true), 0.0);
  check_close(ops::sum_to(x.to(kGpu), Shape{4, 1}), ops::sum_to(x, Shape{4, 1}), 1e-5);
}

TEST_CASE("views, concatenation and splits on the GPU match the CPU, forward and backward", "[cuda]") {
  const Tensor x = varied({3, 4, 5}, -2, 2), y = varied({3, 2, 5}, -1, 1);
  check_op([](const Inputs& in) { return contiguous(permute(in[0], {2, 0, 1})); }, {x}, 0.0);
  check_op([](const Inputs& in) { return transpose(in[0], 0, 2) * 2.0; }, {x}, 0.0);
  check_op([](const Inputs& in) {
    return narrow(in[0], 1, 1, 2) + expand(unsqueeze(narrow(select(in[0], 2, 3), 1, 0, 2), 2), {3, 2, 5});
  }, {x}, 1e-6);
  check_op([](const Inputs& in) { return expand(unsqueeze(squeeze(narrow(in[0], 2, 0, 1), 2), 0), {2, 3, 4}); }, {x},
           1e-6);
  check_op([](const Inputs& in) { return reshape(transpose(in[0], 1, 2), {3, 20}); }, {x}, 0.0);
  check_op([](const Inputs& in) { return cat({in[0], in[1]}, 1); }, {x, y}, 0.0);
  check_op([](const Inputs& in) { return stack({in[0], in[0] * 2.0}, 2); }, {y}, 0.0);
  check_op([](const Inputs& in) {
    const std::vector<Tensor> parts = split(in[0], 2, 1), halves = chunk(in[0], 2, 2);
    return cat({parts[0] * parts[1], narrow(halves[1], 1, 0, 2)}, 2);
  }, {x}, 1e-5);
  check_close(ops::tril(x.to(kGpu), -1), ops::tril(x, -1), 0.0);
  check_close(ops::triu(x.to(kGpu), 1), ops::triu(x, 1), 0.0);
  check_close(ops::causal_mask(4, 6, kGpu), ops::causal_mask(4, 6), 0.0);
}

TEST_CASE("products, linear layers, softmax and layer norm on the GPU match the CPU, forward and backward",
          "[cuda]") {
  const Tensor x = varied({2, 3, 8}, -1, 1), w = varied({6, 8}, -0.5, 0.5), b = varied({6}, -0.5, 0.5);
  check_op([](const Inputs& in) { return matmul(in[0], in[1]); }, {x, varied({8, 5}, -1, 1)}, 1e-5);
  check_op([](const Inputs& in) { return matmul(in[0], transpose(in[1], 1, 2)); }, {x, varied({2, 4, 8}, -1, 1)},
           1e-5);
  check_op([](const Inputs& in) { return matmul(in[0], in[1]); }, {varied({8}, -1, 1), varied({8, 3}, -1, 1)}, 1e-5);
  check_op([](const Inputs& in) { return linear(in[0], in[1], in[2]); }, {x, w, b}, 1e-5);
  check_op([](const Inputs& in) { return linear_relu(in[0], in[1], in[2]); }, {x, w, b}, 1e-5);
  check_op([](const Inputs& in) { return linear_relu(in[0], in[1], Tensor()); }, {x, w}, 1e-5);  // no bias
  check_op([](const Inputs& in) { return softmax(in[0], -1); }, {x}, 1e-5);
  check_op([](const Inputs& in) { return log_softmax(in[0], 1); }, {x}, 1e-5);
  check_op([](const Inputs& in) { return layer_norm(in[0], in[1], in[2], 1e-5); },
           {x, varied({8}, 0.5, 1.5), varied({8}, -1, 1)}, 1e-4);
  // Enough rows that the bias and layer-norm gradients are summed in chunks of rows.
  const Tensor tall = varied({100, 8}, -1, 1);
  check_op([](const Inputs& in) { return linear_relu(in[0], in[1], in[2]); }, {tall, w, b}, 1e-5);
  check_op([](const Inputs& in) { return layer_norm(in[0], in[1], in[2], 1e-5); },
           {tall, varied({8}, 0.5, 1.5), varied({8}, -1, 1)}, 1e-4);
  const Tensor out = zeros({3, 5}), a = varied({3, 8}, -1, 1), bm = varied({8, 5}, -1, 1);
  const Tensor cpu_out = varied({3, 5}, -1, 1), gpu_out = cpu_out.to(kGpu);
  ops::matmul_into(a, bm, cpu_out, 0.5, 2.0);
  ops::matmul_into(a.to(kGpu), bm.to(kGpu), gpu_out, 0.5, 2.0);
  check_close(gpu_out, cpu_out, 1e-5);
}

TEST_CASE("dropout, embeddings, index_select and the cross entropy on the GPU match the CPU, forward and backward",
          "[cuda]") {
  const Tensor x = varied({4, 50}, -2, 2), residual = varied({4, 50}, -1, 1);
  check_op([](const Inputs& in) {
    Generator gen(5);
    return dropout(in[0], 0.25, true, &gen);
  }, {x}, 1e-6);
  check_op([](const Inputs& in) {
    Generator gen(6);
    return dropout_add(in[0], in[1], 0.4, true, &gen);
  }, {x, residual}, 1e-6);
  const Tensor table = varied({7, 6}, -1, 1);
  const Tensor ids = from_vector<int64_t>({3, 1, 0, 3, 6, 1}, Shape{2, 3});
  check_op([](const Inputs& in) { return embedding(in[0], in[1], 1); }, {table, ids}, 1e-6);
  check_op([](const Inputs& in) { return index_select(in[0], 1, in[1]); },
           {table, from_vector<int64_t>({5, 0, 5}, Shape{3})}, 1e-6);
  const Tensor targets = from_vector<int64_t>({3, 49, 1, 0}, Shape{4});
  check_op([](const Inputs& in) { return label_smoothed_cross_entropy(in[0], in[1], 0.1, 1); }, {x, targets}, 1e-5);
  check_close(ops::gather_last(x.to(kGpu), targets.to(kGpu)), ops::gather_last(x, targets), 0.0);
  const ops::ValuesIndices cpu_top = ops::topk(x, 5, false), gpu_top = ops::topk(x.to(kGpu), 5, false);
  check_close(gpu_top.values, cpu_top.values, 0.0);
  check_close(gpu_top.indices, cpu_top.indices, 0.0);
}

TEST_CASE("attention on the GPU matches the CPU, forward and backward, fused and with dropout", "[cuda]") {
  // Sentence 1 is padded at keys 0, 1 and 4: causal with Tq = 4, its first query (keys 0 and
  // 1 in sight) sees no key at all.
  const Tensor padding = ops::gt(from_vector<float>({0, 0, 0, 0, 1, 1, 1, 0, 0, 1}, Shape{2, 5}), 0.5);
  for (const double dropout : {0.0, 0.1})  // without dropout the fused attention_forward kernel runs
    for (const int64_t queries : {int64_t(4), int64_t(1)})  // Tq = 1: a decoding step
      for (const bool causal : {false, true}) {
        INFO("dropout " << dropout << ", Tq " << queries << ", causal " << causal);
        const auto attend = [&](const Inputs& in, bool probabilities) {
          Generator gen(9);
          const AttentionOptions options{.key_padding_mask = in[3], .causal = causal, .scale = 0.5,
                                         .dropout = dropout, .training = true, .generator = &gen,
                                         .return_probabilities = probabilities};
          // q, k, v as heads of [B, T, H, d] projections: permuted views, as the mixers pass them.
          const auto heads = [](const Tensor& t) { return permute(t, {0, 2, 1, 3}); };
          const AttentionResult r = scaled_dot_product_attention(heads(in[0]), heads(in[1]), heads(in[2]), options);
          return probabilities ? r.probabilities : r.out;
        };
        const Inputs inputs{varied({2, queries, 3, 8}, -1, 1), varied({2, 5, 3, 8}, -1, 1),
                            varied({2, 5, 3, 8}, -1, 1), padding};
        check_op([&](const Inputs& in) { return attend(in, false); }, inputs, 1e-5);
        check_op([&](const Inputs& in) { return attend(in, true); }, inputs, 1e-5);
      }
  // A padding mask left on the host is named, not handed to the kernel as a device pointer.
  const Tensor q = varied({2, 3, 4, 8}, -1, 1).to(kGpu), k = varied({2, 3, 5, 8}, -1, 1).to(kGpu);
  CHECK_THROWS_WITH(scaled_dot_product_attention(q, k, k, AttentionOptions{.key_padding_mask = padding}),
                    Catch::Contains("key_padding_mask") && Catch::Contains("on cpu"));
}

TEST_CASE("the optimizer and loss-scaling kernels on the GPU match the CPU", "[cuda]") {
  const Tensor grad = varied({700}, -1, 1);
  const NagUpdate nag{.shrink = 0.99f, .buffer_to_param = 0.9f, .grad_to_param = -0.2f, .buffer_decay = 0.95f,
                      .grad_to_buffer = -0.1f, .decays = true};
  const Tensor cpu_param = varied({700}, -2, 2), gpu_param = cpu_param.to(kGpu);
  const Tensor cpu_buffer = varied({700}, -0.1, 0.1), gpu_buffer = cpu_buffer.to(kGpu);
  ops::nag_update_({{cpu_param, grad, cpu_buffer, nag}});
  ops::nag_update_({{gpu_param, grad.to(kGpu), gpu_buffer, nag}});
  check_close(gpu_param, cpu_param, 1e-6);
  check_close(gpu_buffer, cpu_buffer, 1e-6);
  const Tensor cpu_found = zeros(Shape{}), gpu_found = zeros(Shape{}, DType::Float32, kGpu);
  const Tensor cpu_x = grad.clone(), gpu_x = grad.to(kGpu);
  ops::scale_({cpu_x}, 0.5, cpu_found);
  ops::scale_({gpu_x}, 0.5, gpu_found);
  check_close(gpu_x, cpu_x, 0.0);
  check_close(gpu_found, cpu_found, 0.0);
  const Tensor cpu_acc = grad.clone(), gpu_acc = grad.to(kGpu);
  ops::add_(cpu_acc, varied({700}, 0, 1), 0.5);
  ops::add_(gpu_acc, varied({700}, 0, 1).to(kGpu), 0.5);
  check_close(gpu_acc, cpu_acc, 1e-6);
}

namespace {

// A post-norm Transformer encoder layer (docs/models.md §1) from the differentiable ops, as
// nn/transformer/encoder_layer.cpp composes them: self-attention over heads of [B, T, H, d]
// projections with a key padding mask, then the bias + ReLU FFN, each with dropout + residual
// and layer norm. Inputs: x, the padding mask, then the weights (see the test).
Tensor encoder_layer(const Inputs& in, int64_t heads) {
  const Tensor& x = in[0];
  const int64_t batch = x.size(0), length = x.size(1), width = x.size(2), d = width / heads;
  Generator gen(21);
  const auto split_heads = [&](const Tensor& t) { return permute(view(t, {batch, length, heads, d}), {0, 2, 1, 3}); };
  const Tensor q = split_heads(linear(x, in[2], in[3])), k = split_heads(linear(x, in[4], in[5]));
  const Tensor v = split_heads(linear(x, in[6], in[7]));
  const AttentionOptions options{.key_padding_mask = in[1], .scale = 1.0 / std::sqrt(double(d)), .dropout = 0.1,
                                 .training = true, .generator = &gen};
  const Tensor attended = scaled_dot_product_attention(q, k, v, options).out;
  const Tensor merged = reshape(permute(attended, {0, 2, 1, 3}), {batch, length, width});
  const Tensor h = layer_norm(dropout_add(linear(merged, in[8], in[9]), x, 0.1, true, &gen), in[10], in[11]);
  const Tensor ffn = linear(dropout(linear_relu(h, in[12], in[13]), 0.1, true, &gen), in[14], in[15]);
  return layer_norm(dropout_add(ffn, h, 0.1, true, &gen), in[16], in[17]);
}

}  // namespace

TEST_CASE("a Transformer encoder layer on the GPU matches the CPU, forward and backward", "[cuda]") {
  const int64_t width = 16, ffn = 32;
  const Tensor padding = ops::gt(from_vector<float>({0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, Shape{2, 5}), 0.5);
  Inputs inputs = {varied({2, 5, width}, -1, 1), padding};
  for (int projection = 0; projection < 4; ++projection) {  // q, k, v, out: weight, bias
    inputs.push_back(varied({width, width}, -0.3, 0.3 + 0.01 * projection));
    inputs.push_back(varied({width}, -0.1, 0.1));
  }
  inputs.push_back(varied({width}, 0.8, 1.2));
  inputs.push_back(varied({width}, -0.1, 0.1));
  inputs.push_back(varied({ffn, width}, -0.3, 0.3));
  inputs.push_back(varied({ffn}, -0.1, 0.1));
  inputs.push_back(varied({width, ffn}, -0.3, 0.3));
  inputs.push_back(varied({width}, -0.1, 0.1));
  inputs.push_back(varied({width}, 0.8, 1.2));
  inputs.push_back(varied({width}, -0.1, 0.1));
  check_op([](const Inputs& in) { return encoder_layer(in, 4); }, inputs, 1e-4);
}
