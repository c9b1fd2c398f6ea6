// Differentiable operations: what nn/ and user code call. Each computes its forward with
// attn::ops (core) and records its backward (autograd/autograd.hpp). Names and semantics
// follow core/ops.hpp; see there for shapes and error behaviour.
#pragma once
#include <vector>

#include "autograd/autograd.hpp"
#include "core/ops.hpp"

namespace attn {

// element-wise
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor gelu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor pow(const Tensor& x, double exponent);
Tensor clamp(const Tensor& x, double low, double high);

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
// On ties (a == b) the gradient is split evenly between a and b.
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator*(const Tensor& a, double s);
Tensor operator/(const Tensor& a, double s);
Tensor operator+(double s, const Tensor& a);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(double s, const Tensor& a);
Tensor operator/(double s, const Tensor& a);

// reductions
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// amax/amin: the gradient goes to the elements equal to the extremum, split evenly between ties.
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor norm(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor cumsum(const Tensor& x, int64_t dim, bool reverse = false);

// views (differentiable; share storage with x)
Tensor view(const Tensor& x, const Shape& shape);
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor permute(const Tensor& x, const std::vector<int>& dims);
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor contiguous(const Tensor& x);

// products, normalisation, softmax
Tensor matmul(const Tensor& a, const Tensor& b);
// y = x @ w^T + b with w [out, in] (fairseq/PyTorch Linear layout); b may be undefined.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);
// relu(linear(x, w, b)) with the bias add and the ReLU fused into one pass after the GEMM,
// and a backward that takes the ReLU mask from the output and the bias gradient from the same pass.
Tensor linear_relu(const Tensor& x, const Tensor& w, const Tensor& b);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5);
// Inverted dropout; identity when !training or p == 0. The backward reuses the saved mask.
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);
// residual + dropout(x, p, training, gen) with the dropout and the add fused (same mask, same
// result); x and residual have the same shape.
Tensor dropout_add(const Tensor& x, const Tensor& residual, double p, bool training, Generator* gen = nullptr);

// shape ops that copy (split/chunk return views; their gradients are joined by one cat)
Tensor cat(const std::vector<Tensor>& xs, int64_t dim);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim);

// indexing
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& indices);

// Label-smoothed cross entropy (docs/models.md §1.6): logits [N, V], targets int64 [N].
// Returns the summed smoothed loss (0-d, logits' dtype) over non-ignored targets; the
// summed NLL and the count come back through the optional pointers.
Tensor label_smoothed_cross_entropy(const Tensor& logits, const Tensor& targets, double epsilon,
                                    int64_t ignore_index, double* nll_sum = nullptr, int64_t* count = nullptr);

}  // namespace attn
