// CPU kernels of the training step (core/backend.hpp): the Adam and NAG updates, the weights'
// moving average, the sum of squares behind the gradient norm, and gradient scaling with a
// non-finite check.
//
// The updates work through cache-sized blocks with Eigen array maps (vectorized, sqrt
// included), spread over threads when there are many blocks; each element's arithmetic is
// the same float32 expression whatever the blocking, so results do not depend on threads.
// The sum of squares is accumulated in float64 per fixed chunk and the chunks are summed in
// order, again independent of the thread count. Each kernel takes a whole group of tensors
// and runs one parallel loop over the blocks of all of them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/eigen.hpp"

namespace attn::cpu {
namespace {

using FloatArray = Eigen::Map<Eigen::ArrayXf>;
using ConstFloatArray = Eigen::Map<const Eigen::ArrayXf>;

constexpr int64_t kBlockElements = 4096;
constexpr int64_t kParallelBlocks = 8;
constexpr int64_t kChunkElements = 1 << 15;

// A piece of a group: `size` elements from `begin` of its tensor number `tensor`.
struct Piece {
  size_t tensor;
  int64_t begin, size;
};

// The group's tensors cut into pieces of at most piece_elements, in order.
std::vector<Piece> pieces_of(const std::vector<int64_t>& numels, int64_t piece_elements) {
  std::vector<Piece> pieces;
  for (size_t t = 0; t < numels.size(); ++t)
    for (int64_t begin = 0; begin < numels[t]; begin += piece_elements)
      pieces.push_back({t, begin, std::min(piece_elements, numels[t] - begin)});
  return pieces;
}

// Runs body(tensor, begin, size) over every block of kBlockElements of the group's tensors,
// in one parallel loop over the blocks of all of them.
template <typename Body>
void for_each_block(const std::vector<int64_t>& numels, Body&& body) {
  const std::vector<Piece> blocks = pieces_of(numels, kBlockElements);
  const auto count = int64_t(blocks.size());
#pragma omp parallel for schedule(static) if (count >= kParallelBlocks)
  for (int64_t b = 0; b < count; ++b) body(blocks[size_t(b)].tensor, blocks[size_t(b)].begin, blocks[size_t(b)].size);
}

// The element count of each item of a group: its tensor's, or its parameter's.
int64_t numel_of(const Tensor& x) { return x.numel(); }
int64_t numel_of(const AverageTensors& pair) { return pair.average.numel(); }
template <typename Update>
int64_t numel_of(const Update& update) {
  return update.param.numel();
}

template <typename Item>
std::vector<int64_t> numels_of(const std::vector<Item>& group) {
  std::vector<int64_t> numels;
  for (const Item& item : group) numels.push_back(numel_of(item));
  return numels;
}

double chunk_sum_of_squares(const float* x, int64_t n) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * double(x[i]);
  return sum;
}

}  // namespace

void CpuBackend::adam_update(const std::vector<AdamTensors>& group) {
  for_each_block(numels_of(group), [&](size_t t, int64_t begin, int64_t size) {
    const AdamTensors& p = group[t];
    const AdamUpdate& u = p.update;
    FloatArray theta(p.param.data<float>() + begin, size), m(p.exp_avg.data<float>() + begin, size),
        v(p.exp_avg_sq.data<float>() + begin, size);
    const ConstFloatArray grad(p.grad.data<float>() + begin, size);
    const auto g = grad * u.grad_scale;  // an expression: evaluated per element where used
    m = u.beta1 * m + u.one_minus_beta1 * g;
    v = u.beta2 * v + u.one_minus_beta2 * g.square();
    if (u.decays) theta += u.decay * theta;
    theta += u.neg_step_size * (m / (v.sqrt() + u.eps));
  });
}

void CpuBackend::nag_update(const std::vector<NagTensors>& group) {
  for_each_block(numels_of(group), [&](size_t t, int64_t begin, int64_t size) {
    const NagTensors& p = group[t];
    const NagUpdate& u = p.update;
    FloatArray theta(p.param.data<float>() + begin, size), b(p.buffer.data<float>() + begin, size);
    const ConstFloatArray grad(p.grad.data<float>() + begin, size);
    const auto g = grad * u.grad_scale;  // an expression: evaluated per element where used
    if (u.decays) theta *= u.shrink;
    theta += u.buffer_to_param * b;
    theta += u.grad_to_param * g;
    b = u.buffer_decay * b + u.grad_to_buffer * g;
  });
}

void CpuBackend::moving_average(const std::vector<AverageTensors>& group, double decay) {
  const float keep = float(decay), take = float(1.0 - decay);
  for_each_block(numels_of(group), [&](size_t t, int64_t begin, int64_t size) {
    FloatArray average(group[t].average.data<float>() + begin, size);
    const ConstFloatArray value(group[t].value.data<float>() + begin, size);
    average = keep * average + take * value;
  });
}

// Each tensor's sum of squares is its chunks' sums added in order, and total takes the
// tensors' sums in order: the same figure at every thread count.
void CpuBackend::add_sum_of_squares(const std::vector<Tensor>& xs, const Tensor& total) {
  const std::vector<Piece> chunks = pieces_of(numels_of(xs), kChunkElements);
  std::vector<double> partial(chunks.size(), 0.0);
  const auto count = int64_t(chunks.size());
#pragma omp parallel for schedule(static) if (count > 1)
  for (int64_t c = 0; c < count; ++c) {
    const Piece& chunk = chunks[size_t(c)];
    partial[size_t(c)] = chunk_sum_of_squares(xs[chunk.tensor].data<float>() + chunk.begin, chunk.size);
  }
  double& sum = *total.data<double>();
  for (size_t c = 0; c < chunks.size();) {
    double tensor_sum = 0.0;
    const size_t tensor = chunks[c].tensor;
    for (; c < chunks.size() && chunks[c].tensor == tensor; ++c) tensor_sum += partial[c];
    sum += tensor_sum;
  }
}

void CpuBackend::scale_check_finite(const std::vector<Tensor>& xs, double scale, const Tensor& found_nonfinite) {
  const float factor = float(scale);
  // x − x is 0 for a finite x and NaN for ±inf or NaN, and a NaN survives any sum: the probe
  // is a plain float sum, which vectorizes (a boolean "or" of isfinite did not: 2× slower).
  float probe = 0.0f;
  const std::vector<Piece> chunks = pieces_of(numels_of(xs), kChunkElements);
  const auto count = int64_t(chunks.size());
#pragma omp parallel for schedule(static) reduction(+ : probe) if (count > 1)
  for (int64_t c = 0; c < count; ++c) {
    float* const data = xs[chunks[size_t(c)].tensor].data<float>() + chunks[size_t(c)].begin;
    const int64_t n = chunks[size_t(c)].size;
#pragma omp simd reduction(+ : probe)
    for (int64_t i = 0; i < n; ++i) {
      data[i] *= factor;
      probe += data[i] - data[i];
    }
  }
  if (probe != 0.0f && found_nonfinite.defined()) *found_nonfinite.data<float>() = 1.0f;
}

}  // namespace attn::cpu
