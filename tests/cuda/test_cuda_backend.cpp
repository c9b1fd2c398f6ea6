// The CUDA backend on a real GPU (skipped, with the reason, where there is none; see
// gpu_test_main.cpp): each kernel it implements against the CPU backend on the same data —
// copies both ways and strided, fill, the unary and (broadcast) binary ops, bias + ReLU, row
// gathers, random draws and dropout (the CPU's numbers and masks), reductions, softmax,
// layer norm and their backward, the cross entropy, the optimizer updates and gradient
// norm, products with plain, transposed, broadcast and head-interleaved operands, and the
// attention variants' kernels (banded convolution, gated linear attention, delta rule) —
// and that it implements every kernel of the table.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/backend.hpp"
#include "core/ops.hpp"
#include "core/ops_update.hpp"

using namespace attn;

namespace {

const Device kGpu = Device::cuda(0);

Tensor varied(const Shape& shape, double low, double high) {
  Tensor t = zeros(shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = float(low + (high - low) * (0.5 + 0.5 * std::sin(1.3 * double(i))));
  return t;
}

void check_close(const Tensor& gpu, const Tensor& cpu, double tolerance) {
  const Tensor back = gpu.to(Device::cpu()).contiguous(), expected = cpu.contiguous();
  REQUIRE(back.shape() == expected.shape());
  for (int64_t i = 0; i < back.numel(); ++i) {
    INFO("element " << i);
    CHECK(back.data<float>()[i] == Approx(expected.data<float>()[i]).epsilon(tolerance).margin(tolerance));
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
}

TEST_CASE("optimizer steps and gradient clipping on the GPU match the CPU", "[cuda]") {
  const Tensor grad = varied({3000}, -1, 1);
  const AdamUpdate adam{.beta1 = 0.9f, .beta2 = 0.98f, .one_minus_beta1 = 0.1f, .one_minus_beta2 = 0.02f,
                        .eps = 1e-8f, .decay = 0.0f, .neg_step_size = -1e-3f, .decays = false};
  const Tensor cpu_param = varied({3000}, -2, 2), gpu_param = cpu_param.to(kGpu);
  const Tensor cpu_m = zeros({3000}), cpu_v = zeros({3000}), gpu_m = cpu_m.to(kGpu), gpu_v = cpu_v.to(kGpu);
  ops::adam_update_(cpu_param, grad, cpu_m, cpu_v, adam);
  ops::adam_update_(gpu_param, grad.to(kGpu), gpu_m, gpu_v, adam);
  check_close(gpu_param, cpu_param, 1e-6);
  const Tensor cpu_total = zeros(Shape{}, DType::Float64), gpu_total = zeros(Shape{}, DType::Float64, kGpu);
  ops::add_sum_of_squares_(cpu_total, grad);
  ops::add_sum_of_squares_(gpu_total, grad.to(kGpu));
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
}

TEST_CASE("the label-smoothed cross entropy on the GPU matches the CPU and names a bad target", "[cuda]") {
  const Tensor logits = varied({8, 500}, -5, 5);
  const Tensor targets = from_vector<int64_t>({3, 1, 499, 0, 17, 1, 250, 9}, Shape{8});
  const ops::CrossEntropyResult cpu = ops::label_smoothed_cross_entropy(logits, targets, 0.1, 1);
  const ops::CrossEntropyResult gpu = ops::label_smoothed_cross_entropy(logits.to(kGpu), targets.to(kGpu), 0.1, 1);
  CHECK(gpu.loss.to(Device::cpu()).item() == Approx(cpu.loss.item()).epsilon(1e-6));
  CHECK(gpu.count == cpu.count);
  check_close(ops::label_smoothed_cross_entropy_backward(logits.to(kGpu), targets.to(kGpu), gpu.lse, 0.1, 1, 0.5),
              ops::label_smoothed_cross_entropy_backward(logits, targets, cpu.lse, 0.1, 1, 0.5), 1e-6);
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

TEST_CASE("the CUDA backend implements every kernel of the table", "[cuda]") {
  Backend& cuda = backend_for(kGpu);
  for (size_t k = 0; k < kKernelCount; ++k) {
    INFO(kernel_name(Kernel(k)));
    CHECK(cuda.supports(Kernel(k)));
  }
}
