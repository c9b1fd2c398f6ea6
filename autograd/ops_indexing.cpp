// Differentiable lookups. Both backwards scatter-add the output gradient into the looked-up
// rows with ops::embedding_backward (deterministic order, repeated indices accumulate):
//   embedding:    dW[indices[i]] += dy[i]; rows equal to padding_idx get no gradient
//                 (fairseq/PyTorch padding_idx semantics);
//   index_select: the same along `dim`, by moving dim to the front.
#include "autograd/ops.hpp"

namespace attn {

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  ATTN_CHECK(weight.dim() == 2, "embedding: weight must be 2-D [V, D], got {}", weight.shape().str());
  ATTN_CHECK(padding_idx < weight.size(0), "embedding: padding_idx {} out of range for {} rows", padding_idx,
             weight.size(0));
  Tensor out = ops::embedding(weight, indices);
  return record("embedding", {weight, indices}, out, [indices, rows = weight.size(0), padding_idx](const Tensor& g) {
    Tensor g_rows = g.reshape({-1, g.size(-1)});
    return std::vector{ops::embedding_backward(g_rows, indices.reshape({-1}), rows, padding_idx), Tensor()};
  });
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& indices) {
  Tensor out = ops::index_select(x, dim, indices);
  int d = wrap_dim(dim, x.dim());
  return record("index_select", {x, indices}, out, [indices, d, shape = x.shape()](const Tensor& g) {
    Tensor g_front = g.transpose(0, d);  // the selected dim first
    Tensor g_rows = g_front.reshape({g_front.size(0), -1});
    Tensor dx_rows = ops::embedding_backward(g_rows, indices, shape[d]);
    Shape front_shape = g_front.shape();
    front_shape[0] = shape[d];
    return std::vector{dx_rows.view(front_shape).transpose(0, d), Tensor()};
  });
}

}  // namespace attn
