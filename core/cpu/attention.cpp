// CPU fused attention forward (core/backend_kernels.def attention_forward): the same steps as
// the composed path of autograd/fused/scaled_dot_product.cpp, on the backend's own kernels —
// the two products through batched_gemm (OpenBLAS / oneDNN, heads read in place), the softmax
// through CpuBackend::softmax — so its results are those of the composed path, bit for bit.
// What it saves is the composed path's separate score tensor and its mask tensors: the
// scores are written into `probabilities` and masked there, in place.
#include <algorithm>
#include <limits>
#include <vector>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/row_loop.hpp"

namespace attn::cpu {
namespace {

// Sets the masked scores of every row of scores [B, H, Tq, Tk] (contiguous) to −∞ and
// returns, per row, whether no key is visible. The causal mask is a row's tail, filled in
// one go; the padding is looked up only for the keys before it.
template <typename T>
std::vector<char> mask_scores(const Tensor& scores, const Tensor& key_padding_mask, bool causal) {
  const int64_t heads = scores.size(1), tq = scores.size(2), tk = scores.size(3);
  const int64_t rows = scores.numel() / std::max<int64_t>(tk, 1);
  const bool* padding = key_padding_mask.defined() ? key_padding_mask.data<bool>() : nullptr;
  const int64_t pad_batch_stride = padding ? key_padding_mask.stride(0) : 0;
  const int64_t pad_key_stride = padding ? key_padding_mask.stride(1) : 0;
  T* base = scores.data<T>();
  std::vector<char> dead(size_t(rows), 0);
  for_each_row(rows, tk, [&](int64_t r) {
    const int64_t batch = r / (heads * tq), query = r % tq;
    const int64_t visible_end = causal ? std::clamp<int64_t>(query + tk - tq + 1, 0, tk) : tk;
    T* row = base + r * tk;
    std::fill(row + visible_end, row + tk, -std::numeric_limits<T>::infinity());
    int64_t visible = visible_end;
    if (padding) {
      const bool* pad_row = padding + batch * pad_batch_stride;
      for (int64_t j = 0; j < visible_end; ++j)
        if (pad_row[j * pad_key_stride]) {
          row[j] = -std::numeric_limits<T>::infinity();
          --visible;
        }
    }
    dead[size_t(r)] = visible == 0;
  });
  return dead;
}

// Zeroes the rows of probabilities [rows, Tk] that softmax turned to NaN (no visible key).
template <typename T>
void zero_dead_rows(const Tensor& probabilities, const std::vector<char>& dead) {
  const int64_t tk = probabilities.size(3);
  T* base = probabilities.data<T>();
  for (size_t r = 0; r < dead.size(); ++r)
    if (dead[r]) std::fill(base + int64_t(r) * tk, base + int64_t(r + 1) * tk, T(0));
}

}  // namespace

void CpuBackend::attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask,
                                   bool causal, double scale, const Tensor& out, const Tensor& probabilities) {
  batched_gemm(q, k.transpose(-2, -1), probabilities, scale, 0.0);
  dispatch_floating(q.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool masked = causal || key_padding_mask.defined();
    const std::vector<char> dead = masked ? mask_scores<T>(probabilities, key_padding_mask, causal)
                                          : std::vector<char>();
    softmax(probabilities, probabilities, false);
    zero_dead_rows<T>(probabilities, dead);
  });
  batched_gemm(probabilities, v, out, 1.0, 0.0);
}

}  // namespace attn::cpu
