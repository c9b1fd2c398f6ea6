#include "autograd/fused/scaled_dot_product.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/ops_attention.hpp"

namespace attn {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  ATTN_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
             "scaled_dot_product_attention: q, k, v must be [B, H, T, d], got {}, {}, {}", q.shape().str(),
             k.shape().str(), v.shape().str());
  ATTN_CHECK(q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3),
             "scaled_dot_product_attention: q {} and k {} differ in batch, heads or head width", q.shape().str(),
             k.shape().str());
  ATTN_CHECK(v.size(0) == k.size(0) && v.size(1) == k.size(1) && v.size(2) == k.size(2),
             "scaled_dot_product_attention: k {} and v {} differ in batch, heads or length", k.shape().str(),
             v.shape().str());
  ATTN_CHECK(q.dtype() == k.dtype() && k.dtype() == v.dtype() && is_floating(q.dtype()),
             "scaled_dot_product_attention: q, k, v must share a float dtype, got {}, {}, {}", dtype_name(q.dtype()),
             dtype_name(k.dtype()), dtype_name(v.dtype()));
  ATTN_CHECK(o.dropout >= 0.0 && o.dropout < 1.0, "scaled_dot_product_attention: dropout must be in [0, 1), got {}",
             o.dropout);
  const Tensor& pad = o.key_padding_mask;
  if (!pad.defined()) return;
  ATTN_CHECK(pad.dtype() == DType::Bool && pad.dim() == 2 && pad.size(0) == k.size(0) && pad.size(1) == k.size(2),
             "scaled_dot_product_attention: key_padding_mask must be Bool [B={}, Tk={}], got {} {}", k.size(0),
             k.size(2), dtype_name(pad.dtype()), pad.shape().str());
}

// An uninitialised tensor of `shape` whose memory is laid out in the dim order of `like`
// (same rank): for heads split out of a projection, [B, H, T, d] over [B, T, H, d] memory, so
// merging the heads again (or the backward of the split) is a view, not a copy.
Tensor empty_in_layout_of(const Shape& shape, const Tensor& like) {
  std::vector<int> order(size_t(like.dim()));
  for (int i = 0; i < like.dim(); ++i) order[size_t(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return like.stride(x) > like.stride(y); });
  Shape memory_shape;
  for (int d : order) memory_shape.push_back(shape[d]);
  std::vector<int> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[size_t(order[i])] = int(i);
  return Tensor(memory_shape, like.dtype(), like.device()).permute(inverse);
}

// alpha · a @ b over the leading [B, H] dims, in one batched GEMM (core folds or keeps the
// two batch dims; strided heads are read in place). The result takes the memory layout of
// `layout` when given, else it is contiguous.
Tensor product(const Tensor& a, const Tensor& b, double alpha = 1.0, const Tensor& layout = Tensor()) {
  const Shape shape{a.size(0), a.size(1), a.size(2), b.size(3)};
  Tensor out = layout.defined() ? empty_in_layout_of(shape, layout) : Tensor(shape, a.dtype(), a.device());
  ops::matmul_into(a, b, out, alpha);
  return out;
}

Tensor transpose_last(const Tensor& t) { return t.transpose(-2, -1); }

// Bool [B, 1, Tq, 1]: rows of the mask with no visible key; undefined when there are none.
// Only a host mask is looked at: on a device the rows are always returned (zeroing no row
// changes nothing), as looking would make the host wait for the device mid-forward.
Tensor fully_masked_rows(const Tensor& mask) {
  Tensor dead = ops::eq(ops::amax(mask, {-1}, true), kMinusInfinity);
  if (!dead.device().is_cpu()) return dead;
  return ops::amax(dead.to(DType::Float32)).item() > 0 ? dead : Tensor();
}

}  // namespace

Tensor additive_attention_mask(const Tensor& key_padding_mask, bool causal, int64_t tq, int64_t tk, DType dtype,
                               Device device) {
  Tensor mask;
  if (key_padding_mask.defined()) {
    const int64_t batch = key_padding_mask.size(0);
    mask = ops::masked_fill(zeros({batch, 1, 1, tk}, dtype, device), key_padding_mask.view({batch, 1, 1, tk}),
                            kMinusInfinity);
  }
  if (causal) {
    Tensor last_visible = ops::add(arange(0, double(tq), 1, DType::Int64, device), double(tk - tq)).view({tq, 1});
    Tensor future = ops::gt(arange(0, double(tk), 1, DType::Int64, device).view({1, tk}), last_visible);
    Tensor causal_mask = ops::masked_fill(zeros({1, 1, tq, tk}, dtype, device), future.view({1, 1, tq, tk}),
                                          kMinusInfinity);
    mask = mask.defined() ? ops::add(mask, causal_mask) : causal_mask;
  }
  return mask;
}

namespace {

// The forward's tensors: the output, P, the P̃ that multiplied V and the dropout's keep-mask
// (undefined without dropout, when P̃ is P).
struct Forward {
  Tensor out, probs, dropped, keep;
};

// Without dropout, where q's backend has it for these sizes: one attention_forward kernel
// (on CUDA one launch, and no score tensor besides P).
Forward fused_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  Forward f;
  f.out = empty_in_layout_of({q.size(0), q.size(1), q.size(2), v.size(3)}, q);
  f.probs = Tensor({q.size(0), q.size(1), q.size(2), k.size(2)}, q.dtype(), q.device());
  ops::attention_forward_into(q, k, v, o.key_padding_mask, o.causal, o.scale, f.out, f.probs);
  f.dropped = f.probs;
  return f;
}

// Batched GEMMs, the additive mask, softmax and (when `drop`) dropout, each its own kernel.
Forward composed_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o, bool drop) {
  Tensor scores = product(q, transpose_last(k), o.scale);
  Tensor mask = additive_attention_mask(o.key_padding_mask, o.causal, q.size(2), k.size(2), q.dtype(), q.device());
  Forward f;
  if (mask.defined()) {
    ops::add_(scores, mask);
    f.probs = ops::softmax(scores, -1);
    if (Tensor dead = fully_masked_rows(mask); dead.defined()) f.probs = ops::masked_fill(f.probs, dead, 0.0);
  } else {
    f.probs = ops::softmax(scores, -1);
  }
  scores = Tensor();  // free before the output is allocated

  f.dropped = f.probs;
  if (drop) {
    ops::DropoutResult r = ops::dropout(f.probs, o.dropout, o.generator);
    f.dropped = r.out;
    f.keep = r.mask;
  }
  f.out = product(f.dropped, v, 1.0, q);
  return f;
}

}  // namespace

AttentionResult scaled_dot_product_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                                             const AttentionOptions& o) {
  check_inputs(q_in, k_in, v_in, o);
  const Tensor q = detach(q_in), k = detach(k_in), v = detach(v_in);
  const bool drop = o.training && o.dropout > 0.0;
  const Forward f = !drop && ops::fused_attention_applies(q, k, v) ? fused_forward(q, k, v, o)
                                                                    : composed_forward(q, k, v, o, drop);

  AttentionResult result;
  if (o.return_probabilities) result.probabilities = f.probs;
  result.out = record("scaled_dot_product_attention", {q_in, k_in, v_in}, f.out,
                      [q, k, v, probs = f.probs, dropped = f.dropped, keep = f.keep, p = o.dropout,
                       scale = o.scale](const Tensor& grad) {
                        const Tensor& d_out = grad;
                        Tensor d_v = product(transpose_last(dropped), d_out, 1.0, v);
                        Tensor d_probs = product(d_out, transpose_last(v));
                        if (keep.defined()) d_probs = ops::dropout_backward(d_probs, keep, p);
                        Tensor d_scores = ops::softmax_backward(probs, d_probs, -1, false);
                        Tensor d_q = product(d_scores, k, scale, q);
                        Tensor d_k = product(transpose_last(d_scores), q, scale, k);
                        return std::vector{d_q, d_k, d_v};
                      });
  return result;
}

}  // namespace attn
