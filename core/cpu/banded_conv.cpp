// CPU banded convolution, the core of LightConv and DynamicConv (Wu et al. 2019;
// docs/models.md §3.1, §3.4), computed directly on the band: no T×T band matrix and no
// unfolded copy of the input. With R = C/H channels per head, h(c) = c / R, and taps
// w[b,t,h,j] (shared taps: w[h,j] for every b, t):
//
//   forward   out[b,t,c] = Σ_j w[b,t,h(c),j] · u[b, t+j−P, c]
//   backward  du[b,s,c]  = Σ_j w[b, s−j+P, h(c), j] · dout[b, s−j+P, c]
//             dw[b,t,h,j] = Σ_{c∈h} dout[b,t,c] · u[b, t+j−P, c]        (shared: also Σ_{b,t})
//
// with every index outside [0, T) skipped. Each output row (b, t) — and each du row (b, s) —
// is independent: rows are spread over the OpenMP threads, and the inner loop runs over the
// R contiguous channels of a head (vectorized). The shared taps' gradient is summed in
// double per fixed block of rows, then over the blocks in order: the same at every thread count.
#include <algorithm>
#include <vector>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {
namespace {

struct BandShape {
  int64_t batch, length, channels, heads, kernel, per_head, padding_left;
  bool shared;  // taps [H, K] for every position

  BandShape(const Tensor& u, const Tensor& w, int64_t padding_left)
      : batch(u.size(0)), length(u.size(1)), channels(u.size(2)), heads(w.size(-2)), kernel(w.size(-1)),
        per_head(u.size(2) / w.size(-2)), padding_left(padding_left), shared(w.dim() == 2) {}

  int64_t rows() const { return batch * length; }
  // Offset of the taps of row r (= b·T + t), head h.
  int64_t taps(int64_t r, int64_t h) const { return (shared ? 0 : r * heads * kernel) + h * kernel; }
  // Rows per parallel chunk: about kParallelGrain multiply-adds.
  int64_t grain() const { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, channels * kernel)); }
};

// The taps j of row t that land inside the sentence: t + j − P ∈ [0, T).
inline std::pair<int64_t, int64_t> valid_taps(const BandShape& s, int64_t t) {
  return {std::max<int64_t>(0, s.padding_left - t), std::min(s.kernel, s.length + s.padding_left - t)};
}

template <typename T>
void forward_typed(const Tensor& u, const Tensor& w, const Tensor& out, const BandShape& s) {
  const T* up = u.data<T>();
  const T* wp = w.data<T>();
  T* op = out.data<T>();
  parallel_ranges(s.rows(), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t t = r % s.length, b = r / s.length;
      T* o = op + r * s.channels;
      std::fill(o, o + s.channels, T(0));
      const auto [j0, j1] = valid_taps(s, t);
      for (int64_t h = 0; h < s.heads; ++h) {
        const T* taps = wp + s.taps(r, h);
        T* oh = o + h * s.per_head;
        for (int64_t j = j0; j < j1; ++j) {
          const T weight = taps[j];
          const T* in = up + (b * s.length + t + j - s.padding_left) * s.channels + h * s.per_head;
          for (int64_t c = 0; c < s.per_head; ++c) oh[c] += weight * in[c];
        }
      }
    }
  }, s.grain());
}

// du row s gathers from the output rows t = s − j + P that read input s.
template <typename T>
void input_grad_typed(const Tensor& w, const T* gp, T* dup, const BandShape& s) {
  const T* wp = w.data<T>();
  parallel_ranges(s.rows(), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t pos = r % s.length, b = r / s.length;
      T* d = dup + r * s.channels;
      std::fill(d, d + s.channels, T(0));
      const int64_t j0 = std::max<int64_t>(0, pos + s.padding_left - (s.length - 1));
      const int64_t j1 = std::min(s.kernel, pos + s.padding_left + 1);
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t out_row = b * s.length + pos - j + s.padding_left;
        for (int64_t h = 0; h < s.heads; ++h) {
          const T weight = wp[s.taps(out_row, h) + j];
          const T* g = gp + out_row * s.channels + h * s.per_head;
          T* dh = d + h * s.per_head;
          for (int64_t c = 0; c < s.per_head; ++c) dh[c] += weight * g[c];
        }
      }
    }
  }, s.grain());
}

// dw of rows [lo, hi): per row (position taps), or added into `sums` [H·K] in double (shared taps).
template <typename T>
void tap_grads_rows(const T* up, const T* gp, T* dwp, double* sums, int64_t lo, int64_t hi, const BandShape& s) {
  for (int64_t r = lo; r < hi; ++r) {
    const int64_t t = r % s.length, b = r / s.length;
    const auto [j0, j1] = valid_taps(s, t);
    for (int64_t h = 0; h < s.heads; ++h) {
      const T* g = gp + r * s.channels + h * s.per_head;
      for (int64_t j = 0; j < s.kernel; ++j) {
        double dot = 0.0;
        if (j >= j0 && j < j1) {
          const T* in = up + (b * s.length + t + j - s.padding_left) * s.channels + h * s.per_head;
          T acc = T(0);
          for (int64_t c = 0; c < s.per_head; ++c) acc += g[c] * in[c];
          dot = double(acc);
        }
        if (sums != nullptr) sums[h * s.kernel + j] += dot;
        else dwp[s.taps(r, h) + j] = T(dot);
      }
    }
  }
}

// Rows per block of the shared taps' gradient sum (the unit of parallel work).
constexpr int64_t kRowBlock = 64;

template <typename T>
void tap_grads_typed(const T* up, const T* gp, const Tensor& dw, const BandShape& s) {
  T* dwp = dw.data<T>();
  if (!s.shared) {
    parallel_ranges(s.rows(), [&](int64_t lo, int64_t hi) { tap_grads_rows(up, gp, dwp, nullptr, lo, hi, s); },
                    s.grain());
    return;
  }
  const int64_t taps = s.heads * s.kernel, blocks = (s.rows() + kRowBlock - 1) / kRowBlock;
  std::vector<double> partial(size_t(blocks * taps), 0.0);
  parallel_ranges(blocks, [&](int64_t lo, int64_t hi) {
    for (int64_t block = lo; block < hi; ++block)
      tap_grads_rows(up, gp, dwp, partial.data() + block * taps, block * kRowBlock,
                     std::min(s.rows(), (block + 1) * kRowBlock), s);
  }, std::max<int64_t>(1, s.grain() / kRowBlock));
  for (int64_t i = 0; i < taps; ++i) {
    double sum = 0.0;
    for (int64_t block = 0; block < blocks; ++block) sum += partial[size_t(block * taps + i)];
    dwp[i] = T(sum);
  }
}

}  // namespace

void CpuBackend::banded_conv(const Tensor& u, const Tensor& w, int64_t padding_left, const Tensor& out) {
  const BandShape s(u, w, padding_left);
  dispatch_floating(u.dtype(), [&](auto tag) { forward_typed<decltype(tag)>(u, w, out, s); });
}

void CpuBackend::banded_conv_backward(const Tensor& u, const Tensor& w, const Tensor& dout, int64_t padding_left,
                                      const Tensor& du, const Tensor& dw) {
  const BandShape s(u, w, padding_left);
  dispatch_floating(u.dtype(), [&](auto tag) {
    using T = decltype(tag);
    input_grad_typed<T>(w, dout.data<T>(), du.data<T>(), s);
    tap_grads_typed<T>(u.data<T>(), dout.data<T>(), dw, s);
  });
}

}  // namespace attn::cpu
