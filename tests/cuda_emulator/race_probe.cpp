// The CUDA emulator under ThreadSanitizer (cuda/emulator/race_detector.hpp): this program and
// its own copy of the emulator are built with -fsanitize=thread (tests/CMakeLists.txt), and
// ctest runs it once per case:
//   clean                            the project's block-reduction, softmax, fused attention,
//                                    column-sum and grouped sum-of-squares kernels, a barrier
//                                    exchange and atomics across blocks: right results and no
//                                    report (ThreadSanitizer's exit code 66 fails it)
//   missing-barrier-before-read      a thread reads shared memory that another writes, with the
//                                    __syncthreads between them removed
//   missing-barrier-before-overwrite a thread overwrites shared memory that another has yet to
//                                    read, with the second __syncthreads of a reuse removed
// The two missing-barrier cases pass when ThreadSanitizer reports a data race: what the
// emulator's fixed schedules catch by wrong results (test_emulator.cpp), the sanitizer
// catches as the race itself, whatever the schedule.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/kernels/attention.cuh"
#include "cuda/kernels/column_sums.cuh"
#include "cuda/kernels/parameter_update.cuh"
#include "cuda/kernels/softmax.cuh"

namespace emu = attn::cuda_emulator;
namespace kernels = attn::cuda_kernels;

namespace {

constexpr unsigned kThreads = 64;

// out[t] = in[n − 1 − t] through shared memory, twice over the same buffer (the second round
// adds 1); `first_barrier` orders each round's writes before its reads, `second_barrier` the
// first round's reads before the second round's writes.
__global__ void reverse_twice(const float* in, float* out, bool first_barrier, bool second_barrier) {
  float* shared = kernels::shared_memory<float>();
  const unsigned t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
  shared[t] = in[base + t];
  if (first_barrier) __syncthreads();
  const float first = shared[n - 1 - t];
  if (second_barrier) __syncthreads();
  shared[t] = in[base + t] + 1.0f;
  __syncthreads();
  out[base + t] = first + shared[n - 1 - t];
}

__global__ void count_blocks(int* counter) {
  if (threadIdx.x == 0) atomicAdd(counter, 1);
}

int failures = 0;

void expect_near(const char* what, const std::vector<float>& got, const std::vector<float>& expected, double tolerance) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(got[i]) - double(expected[i])) <= tolerance)) {
      std::printf("race probe: %s: element %zu is %g, expected %g\n", what, i, double(got[i]), double(expected[i]));
      ++failures;
      return;
    }
  std::printf("race probe: %s: right\n", what);
}

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = std::sin(float(i) * scale) * 2.0f;
  return x;
}

void run_reverse(bool first_barrier, bool second_barrier) {
  const unsigned blocks = 3;
  const std::vector<float> in = ramp(blocks * kThreads, 0.37f);
  std::vector<float> out(in.size()), expected(in.size());
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < kThreads; ++t) {
      const float x = in[b * kThreads + kThreads - 1 - t];
      expected[b * kThreads + t] = x + (x + 1.0f);
    }
  emu::launch({{blocks}, {kThreads}, kThreads * sizeof(float)}, reverse_twice, in.data(), out.data(), first_barrier,
              second_barrier);
  expect_near("reverse through shared memory", out, expected, 0.0);
}

void run_softmax() {
  const int rows = 3, cols = 300;
  const std::vector<float> x = ramp(size_t(rows) * cols, 0.11f);
  std::vector<float> y(x.size()), expected(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* row = &x[size_t(r) * cols];
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c) max = std::fmax(max, row[c]);
    for (int c = 0; c < cols; ++c) sum += std::exp(row[c] - max);
    for (int c = 0; c < cols; ++c) expected[size_t(r) * cols + c] = float(std::exp(row[c] - max) / sum);
  }
  emu::launch({{unsigned(rows)}, {kThreads}, 32 * sizeof(float)}, kernels::softmax_kernel, x.data(), y.data(), cols,
              false);
  expect_near("softmax (block reductions)", y, expected, 1e-6);
}

void run_attention() {
  kernels::AttentionShape s{};
  s.batch = 2, s.heads = 2, s.queries = 6, s.keys = 40, s.width = 8, s.value_width = 8;  // two key tiles
  const auto strides = [&](int rows, int width) {
    return kernels::AttentionStrides{(long long)s.heads * rows * width, (long long)rows * width, width, 1};
  };
  s.q = strides(s.queries, s.width), s.k = strides(s.keys, s.width), s.v = strides(s.keys, s.value_width);
  s.out = strides(s.queries, s.value_width);
  s.scale = 0.35f;
  s.causal = true;
  s.tile_queries = kernels::fitting_tile_queries(s);  // 8: one tile, two of its warps with no query
  const std::vector<float> q = ramp(size_t(s.batch) * s.heads * s.queries * s.width, 0.3f);
  const std::vector<float> k = ramp(size_t(s.batch) * s.heads * s.keys * s.width, 0.7f);
  const std::vector<float> v = ramp(size_t(s.batch) * s.heads * s.keys * s.value_width, 0.5f);
  bool padding[2 * 40] = {};
  for (int j = 33; j < s.keys; ++j) padding[s.keys + j] = true;  // the second sentence's last 7 keys
  std::vector<float> out(size_t(s.batch) * s.heads * s.queries * s.value_width), expected(out.size());
  std::vector<float> probabilities(size_t(s.batch) * s.heads * s.queries * s.keys);
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads; ++h)
      for (int i = 0; i < s.queries; ++i) {
        std::vector<double> p(s.keys, 0.0);
        double max = -INFINITY, sum = 0;
        for (int j = 0; j < s.keys; ++j) {
          if (padding[b * s.keys + j] || !s.causally_visible(i, j)) continue;
          double dot = 0;
          for (int c = 0; c < s.width; ++c) dot += double(q[s.q.at(b, h, i, c)]) * k[s.k.at(b, h, j, c)];
          p[j] = dot * s.scale;
          max = std::fmax(max, p[j]);
        }
        for (int j = 0; j < s.keys; ++j) {
          const bool visible = !padding[b * s.keys + j] && s.causally_visible(i, j);
          p[j] = visible ? std::exp(p[j] - max) : 0.0;
          sum += p[j];
        }
        for (int c = 0; c < s.value_width; ++c) {
          double o = 0;
          for (int j = 0; j < s.keys; ++j) o += p[j] / sum * v[s.v.at(b, h, j, c)];
          expected[s.out.at(b, h, i, c)] = float(o);
        }
      }
  emu::launch({{unsigned(s.blocks())}, {unsigned(s.threads())}, size_t(s.shared_floats()) * sizeof(float)},
              kernels::attention_forward_kernel, q.data(), k.data(), v.data(), static_cast<const bool*>(padding),
              out.data(), probabilities.data(), s);
  expect_near("fused attention forward", out, expected, 1e-5);
}

// Column sums: eight threads per column exchange their sums through shared memory.
void run_column_sums() {
  const int rows = 300, cols = 40, chunk_rows = 100, chunks = 3;
  const std::vector<float> x = ramp(size_t(rows) * cols, 0.23f);
  std::vector<float> out(cols), expected(cols, 0.0f);
  for (int c = 0; c < cols; ++c) {
    double sum = 0;
    for (int r = 0; r < rows; ++r) sum += x[size_t(r) * cols + c];
    expected[size_t(c)] = float(sum);
  }
  std::vector<double> partial(size_t(chunks) * cols);
  const unsigned threads = 32 * kernels::kColumnSumLanes;
  emu::launch({{2, unsigned(chunks)}, {threads}, threads * sizeof(double)}, kernels::column_partials_kernel, x.data(),
              partial.data(), rows, cols, chunk_rows);
  emu::launch({{1}, {kThreads}, 0}, kernels::column_combine_kernel, static_cast<const double*>(partial.data()),
              out.data(), (long long)cols, chunks);
  expect_near("column sums", out, expected, 1e-4);
}

// The gradient norm's sum of squares over a group of two tensors (block reductions).
void run_sum_of_squares() {
  std::vector<float> a = ramp(5000, 0.13f), b = ramp(70, 0.9f);
  double expected = 0;
  for (float v : a) expected += double(v) * v;
  for (float v : b) expected += double(v) * v;
  kernels::FloatGroup group;
  group.x[0] = a.data(), group.x[1] = b.data();
  group.blocks.add((long long)a.size()), group.blocks.add((long long)b.size());
  std::vector<double> partial(size_t(group.blocks.blocks()));
  emu::launch({{unsigned(group.blocks.blocks())}, {kThreads}, 32 * sizeof(double)},
              kernels::sum_of_squares_partials_kernel, group, partial.data());
  double total = 0;
  emu::launch({{1}, {kThreads}, 32 * sizeof(double)}, kernels::add_partials_kernel,
              static_cast<const double*>(partial.data()), (long long)partial.size(), &total);
  expect_near("sum of squares over a group", {float(total)}, {float(expected)}, 1e-2);
}

void run_atomics() {
  int counter = 0;
  emu::launch({{7}, {kThreads}, 0}, count_blocks, &counter);
  expect_near("atomics across blocks", {float(counter)}, {7.0f}, 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string probe = argc == 2 ? argv[1] : "";
  if (probe == "clean") {
    run_reverse(true, true);
    run_softmax();
    run_attention();
    run_column_sums();
    run_sum_of_squares();
    run_atomics();
  } else if (probe == "missing-barrier-before-read") {
    run_reverse(false, true);
  } else if (probe == "missing-barrier-before-overwrite") {
    run_reverse(true, false);
  } else {
    std::fprintf(stderr, "usage: %s clean | missing-barrier-before-read | missing-barrier-before-overwrite\n", argv[0]);
    return 2;
  }
  // A missing barrier may or may not give a wrong result here; the verdict there is ThreadSanitizer's.
  return probe == "clean" && failures > 0 ? 1 : 0;
}
