// The CUDA kernels of cuda/kernels/, compiled by the host compiler and run on the emulator
// (cuda/emulator/emulator.hpp), against the CPU backend on small shapes: fill, every unary
// op and its backward, bias + ReLU and its backward, row gathers and scatters, every binary
// op and where on broadcast and transposed operands, strided copies of every dtype, uniform
// and normal draws and dropout (the same Philox stream: bit for bit), every reduction over
// any dims, arg-max/min, running sums, gather_last and top-k (ties included), the row sum,
// softmax and log-softmax and their backward, layer norm with and without affine parameters
// and its backward, the label-smoothed cross entropy and its backward, the Adam and NAG
// updates, the gradient norm's sum of squares and gradient scaling — the block reductions
// under both thread schedules, with blocks smaller and larger than a row.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/ops.hpp"
#include "core/ops_update.hpp"
#include "cuda/reduce_layout.hpp"
#include "cuda/strided_layout.hpp"
#include "cuda/kernels/binary.cuh"
#include "cuda/kernels/column_sums.cuh"
#include "cuda/kernels/cross_entropy.cuh"
#include "cuda/kernels/dropout.cuh"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/indexing.cuh"
#include "cuda/kernels/strided_copy.cuh"
#include "cuda/kernels/layer_norm.cuh"
#include "cuda/kernels/parameter_update.cuh"
#include "cuda/kernels/random.cuh"
#include "cuda/kernels/reduce.cuh"
#include "cuda/kernels/row_reduce.cuh"
#include "cuda/kernels/softmax.cuh"

using namespace attn;
using namespace attn::cuda_emulator;
using namespace attn::cuda_kernels;

namespace {

constexpr size_t kReductionScratch = 32 * sizeof(float);
const Schedule kSchedules[] = {Schedule::Ascending, Schedule::Descending};

std::vector<float> values(const Tensor& t) {
  const Tensor c = t.contiguous();
  return {c.data<float>(), c.data<float>() + c.numel()};
}

// Values in [low, high), varied but reproducible.
Tensor varied(const Shape& shape, double low, double high) {
  Tensor t = zeros(shape);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = float(low + (high - low) * (0.5 + 0.5 * std::sin(1.7 * double(i) + 0.3)));
  return t;
}

void check_close(const std::vector<float>& got, const std::vector<float>& expected, double tolerance) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(expected[i]).epsilon(tolerance).margin(tolerance));
  }
}

struct UnaryCase {
  UnaryOp op;
  double low, high;  // the input range where the op is defined
  UnaryParams params;
};

// Every unary op, on inputs where it is defined.
std::vector<UnaryCase> unary_cases() {
  return {
      {UnaryOp::Neg, -3, 3, {}},           {UnaryOp::Abs, -3, 3, {}},           {UnaryOp::Exp, -3, 3, {}},
      {UnaryOp::Log, 0.1, 5, {}},          {UnaryOp::Sqrt, 0.1, 5, {}},         {UnaryOp::Rsqrt, 0.1, 5, {}},
      {UnaryOp::Relu, -3, 3, {}},          {UnaryOp::Elu, -3, 3, {0.7, 0}},     {UnaryOp::Gelu, -3, 3, {}},
      {UnaryOp::Sigmoid, -6, 6, {}},       {UnaryOp::Tanh, -3, 3, {}},          {UnaryOp::Sin, -3, 3, {}},
      {UnaryOp::Cos, -3, 3, {}},           {UnaryOp::Pow, 0.1, 3, {1.7, 0}},    {UnaryOp::Clamp, -3, 3, {-1, 0.5}},
      {UnaryOp::Reciprocal, 0.2, 3, {}},   {UnaryOp::Square, -3, 3, {}},        {UnaryOp::AddScalar, -3, 3, {2.5, 0}},
      {UnaryOp::MulScalar, -3, 3, {-1.5, 0}}, {UnaryOp::RSubScalar, -3, 3, {4, 0}},
      {UnaryOp::RDivScalar, 0.2, 3, {2, 0}},
  };
}

}  // namespace

TEST_CASE("cuda unary_kernel matches the CPU backend for every unary op", "[cuda_kernels]") {
  for (const UnaryCase& c : unary_cases()) {
    INFO("unary op " << int(c.op));
    const Tensor x = varied({1000}, c.low, c.high);
    const std::vector<float> expected = values(ops::unary(c.op, x, c.params));
    std::vector<float> y(1000, 0.0f);
    launch(LaunchConfig{.grid = {3}, .block = {128}}, unary_kernel, c.op, float(c.params.a), float(c.params.b),
           x.data<float>(), y.data(), 1000LL);
    check_close(y, expected, 2e-6);
  }
}

TEST_CASE("cuda fill_kernel writes every element once the grid is smaller than the tensor", "[cuda_kernels]") {
  std::vector<float> y(1000, 0.0f);
  launch(LaunchConfig{.grid = {2}, .block = {64}}, fill_kernel<float>, 2.5f, y.data(), 999LL);
  CHECK(std::count(y.begin(), y.end(), 2.5f) == 999);
  CHECK(y.back() == 0.0f);
}

TEST_CASE("cuda unary_backward_kernel matches the CPU backend for every unary op", "[cuda_kernels]") {
  const Tensor dy = varied({500}, -2, 2);
  for (const UnaryCase& c : unary_cases()) {
    INFO("unary op " << int(c.op));
    const Tensor x = varied({500}, c.low, c.high);
    const Tensor y = ops::unary(c.op, x, c.params);
    const std::vector<float> expected = values(ops::unary_backward(c.op, x, y, dy, c.params));
    std::vector<float> dx(500, 0.0f);
    launch(LaunchConfig{.grid = {2}, .block = {128}}, unary_backward_kernel, c.op, float(c.params.a),
           float(c.params.b), x.data<float>(), y.data<float>(), dy.data<float>(), dx.data(), 500LL);
    check_close(dx, expected, 2e-6);
  }
}

TEST_CASE("cuda bias + ReLU kernels match the CPU backend, the bias gradient included", "[cuda_kernels]") {
  const int64_t rows = 7, cols = 300;
  const Tensor z = varied({rows, cols}, -2, 2), bias = varied({cols}, -1, 1), dy = varied({rows, cols}, -1, 1);
  const Tensor expected = z.clone();
  ops::bias_relu_(expected, bias);
  const Tensor y = z.clone();
  launch(LaunchConfig{.grid = {3}, .block = {128}}, bias_relu_kernel, y.data<float>(), bias.data<float>(), int(cols),
         (long long)(rows * cols));
  CHECK(values(y) == values(expected));  // one add per element: exact

  const ops::BiasReluGrads grads = ops::bias_relu_backward(expected, dy, true);
  std::vector<float> dz(size_t(rows * cols), 0.0f), dbias(size_t(cols), 0.0f);
  launch(LaunchConfig{.grid = {3}, .block = {128}}, relu_mask_backward_kernel, y.data<float>(), dy.data<float>(),
         dz.data(), (long long)(rows * cols));
  CHECK(dz == values(grads.dz));
  // The column sums in one chunk, and in chunks of 2 rows (the last one short) added in chunk
  // order; every schedule of the lanes gives the same sums.
  for (const int chunk_rows : {int(rows), 2}) {
    const int chunks = int((rows + chunk_rows - 1) / chunk_rows);
    std::vector<double> partial(size_t(chunks * cols), 0.0);
    for (Schedule schedule : kSchedules) {
      const unsigned threads = 32 * kColumnSumLanes;
      launch(LaunchConfig{.grid = {unsigned((cols + 31) / 32), unsigned(chunks)}, .block = {threads},
                          .shared_bytes = threads * sizeof(double), .schedule = schedule},
             column_partials_kernel, static_cast<const float*>(dz.data()), partial.data(), int(rows), int(cols),
             chunk_rows);
      launch(LaunchConfig{.grid = {2}, .block = {128}}, column_combine_kernel,
             static_cast<const double*>(partial.data()), dbias.data(), (long long)cols, chunks);
      check_close(dbias, values(grads.dbias), 1e-6);
    }
  }
}

TEST_CASE("cuda column sums of many rows match the CPU's sum over the leading dims", "[cuda_kernels]") {
  // Rows enough for the four-loads-in-flight loop and its remainder; columns not a multiple of 32.
  const int64_t rows = 1000, cols = 45;
  const Tensor x = varied({rows, cols}, -1, 1);
  const std::vector<float> expected = values(ops::sum(x, {0}));
  const int chunk_rows = 300, chunks = 4;
  std::vector<double> partial(size_t(chunks * cols), 0.0);
  std::vector<float> out(size_t(cols), 0.0f);
  const unsigned threads = 32 * kColumnSumLanes;
  launch(LaunchConfig{.grid = {2, unsigned(chunks)}, .block = {threads}, .shared_bytes = threads * sizeof(double)},
         column_partials_kernel, x.data<float>(), partial.data(), int(rows), int(cols), chunk_rows);
  launch(LaunchConfig{.grid = {1}, .block = {64}}, column_combine_kernel, static_cast<const double*>(partial.data()),
         out.data(), (long long)cols, chunks);
  check_close(out, expected, 1e-6);
}

namespace {

// index_add_rows as the launch runs it: each row's links, then the rows added along them.
void add_rows(const Tensor& grad, const Tensor& indices, const Tensor& src, Schedule schedule) {
  const int64_t rows = indices.numel();
  std::vector<long long> next(size_t(rows), 0), first(size_t(rows), 0);
  launch(LaunchConfig{.grid = {2}, .block = {32}, .schedule = schedule}, index_links_kernel, indices.data<int64_t>(),
         (long long)rows, next.data(), first.data());
  launch(LaunchConfig{.grid = {3}, .block = {64}, .schedule = schedule}, index_add_linked_rows_kernel,
         grad.data<float>(), (long long)grad.size(0), indices.data<int64_t>(), src.data<float>(),
         static_cast<const long long*>(next.data()), static_cast<const long long*>(first.data()), (long long)rows,
         int(grad.size(1)));
}

}  // namespace

TEST_CASE("cuda row gather and scatter match the CPU backend, repeated indices included", "[cuda_kernels]") {
  const int64_t vocab = 9, width = 70;
  const Tensor weight = varied({vocab, width}, -1, 1);
  const Tensor indices = from_vector<int64_t>({3, 0, 8, 3, 3, 5}, Shape{6});
  const Tensor expected = ops::index_select(weight, 0, indices);
  std::vector<float> out(size_t(6 * width), 0.0f);
  launch(LaunchConfig{.grid = {2}, .block = {64}}, index_select_rows_kernel<float>, weight.data<float>(),
         (long long)vocab, indices.data<int64_t>(), out.data(), 6LL, int(width));
  CHECK(out == values(expected));

  // Out-of-range rows (left to a deferred check) read as zeros and receive nothing; never
  // memory outside the weight.
  const Tensor bad = from_vector<int64_t>({-1, 9}, Shape{2});
  std::vector<float> bad_out(size_t(2 * width), 7.0f);
  launch(LaunchConfig{.grid = {1}, .block = {64}}, index_select_rows_kernel<float>, weight.data<float>(),
         (long long)vocab, bad.data<int64_t>(), bad_out.data(), 2LL, int(width));
  CHECK(bad_out == std::vector<float>(size_t(2 * width), 0.0f));
  const Tensor untouched = weight.clone();
  add_rows(untouched, bad, varied({2, width}, -1, 1), kSchedules[0]);
  CHECK(values(untouched) == values(weight));

  // Repeated indices (3 three times, not side by side) add in index order: the same additions
  // in the same order as the CPU, so exact, under every schedule.
  const Tensor src = varied({6, width}, -2, 2), start = varied({vocab, width}, -1, 1);
  const Tensor expected_grad = start.clone();
  backend_for(Device::cpu()).index_add_rows(expected_grad, indices, src);
  for (Schedule schedule : kSchedules) {
    const Tensor grad = start.clone();
    add_rows(grad, indices, src, schedule);
    CHECK(values(grad) == values(expected_grad));
  }
  // More rows than a warp compares at once: an index's rows 13 apart, across the warp's
  // 32-index steps.
  std::vector<int64_t> many(100);
  for (size_t i = 0; i < many.size(); ++i) many[i] = int64_t(i * 7 % 13 % vocab);
  const Tensor many_indices = from_vector<int64_t>(many, Shape{100}), many_src = varied({100, width}, -2, 2);
  const Tensor expected_many = start.clone();
  backend_for(Device::cpu()).index_add_rows(expected_many, many_indices, many_src);
  const Tensor grad_many = start.clone();
  add_rows(grad_many, many_indices, many_src, kSchedules[1]);
  CHECK(values(grad_many) == values(expected_many));
}

TEST_CASE("cuda binary_kernel matches the CPU backend for every binary op on broadcast operands",
          "[cuda_kernels]") {
  // a [4, 1, 5] and b [3, 1] broadcast to [4, 3, 5]; b is also read through a transposed view.
  const Tensor a = varied({4, 1, 5}, -2, 2), b = varied({1, 3}, -2, 2).transpose(0, 1);
  const Shape shape{4, 3, 5};
  const Tensor a_view = a.expand(shape), b_view = b.expand(shape);
  for (const BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Maximum,
                            BinaryOp::Minimum, BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt,
                            BinaryOp::Ge}) {
    INFO("binary op " << int(op));
    const Tensor expected = ops::binary(op, a, b);
    const Tensor out(shape, expected.dtype());
    const int64_t n = out.numel();
    const StridedLayout layout = cuda::strided_layout(a_view, b_view, out);
    const LaunchConfig config{.grid = {1}, .block = {32}};  // fewer threads than elements
    if (is_comparison(op)) {
      launch(config, binary_kernel<float, bool>, op, a_view.data<float>(), b_view.data<float>(), out.data<bool>(), layout,
             (long long)n);
      CHECK(std::equal(out.data<bool>(), out.data<bool>() + n, expected.data<bool>()));
    } else {
      launch(config, binary_kernel<float, float>, op, a_view.data<float>(), b_view.data<float>(), out.data<float>(), layout,
             (long long)n);
      CHECK(values(out) == values(expected));  // one float32 operation per element: exact
    }
  }
}

TEST_CASE("cuda dropout kernels draw the CPU's masks bit for bit, with and without the residual add",
          "[cuda_kernels]") {
  const int64_t n = 3000;
  const double p = 0.1;
  const uint64_t seed = 0x5eed, first = 12345;  // a first counter inside a Philox block
  const Tensor x = varied({n}, -2, 2), residual = varied({n}, -1, 1), dy = varied({n}, -3, 3);
  Backend& cpu = backend_for(Device::cpu());
  for (const bool add : {false, true}) {
    const Tensor out(Shape{n}), mask(Shape{n}, DType::Bool);
    if (add) cpu.dropout_add(x, residual, p, seed, first, out, mask);
    else cpu.dropout(x, p, seed, first, out, mask);
    std::vector<float> got(size_t(n), 0.0f);
    std::unique_ptr<bool[]> got_mask(new bool[size_t(n)]);
    launch(LaunchConfig{.grid = {3}, .block = {128}}, dropout_kernel, x.data<float>(),
           add ? residual.data<float>() : nullptr, float(1.0 / (1.0 - p)), float_keep_threshold(p),
           (unsigned long long)seed, (unsigned long long)first, got.data(), got_mask.get(), (long long)n);
    CHECK(std::equal(got_mask.get(), got_mask.get() + n, mask.data<bool>()));
    CHECK(got == values(out));
    const auto kept = std::count(mask.data<bool>(), mask.data<bool>() + n, true);
    CHECK(kept > 2500);  // about 90% kept: the stream is not degenerate
    CHECK(kept < 2900);

    if (add) continue;
    const Tensor dx(Shape{n});
    cpu.dropout_backward(dy, mask, 1.0 / (1.0 - p), dx);
    std::vector<float> got_dx(size_t(n), 0.0f);
    launch(LaunchConfig{.grid = {3}, .block = {128}}, dropout_backward_kernel, dy.data<float>(), got_mask.get(),
           float(1.0 / (1.0 - p)), got_dx.data(), (long long)n);
    CHECK(got_dx == values(dx));
  }
}

TEST_CASE("cuda where_kernel picks from broadcast operands as the CPU backend does", "[cuda_kernels]") {
  const Shape shape{3, 4};
  const Tensor cond = ops::binary(BinaryOp::Gt, varied({1, 4}, -1, 1), zeros({1, 4})).expand(shape);
  const Tensor a = varied({3, 1}, -5, 5).expand(shape), b = varied({4, 3}, 0, 1).transpose(0, 1);
  const Tensor expected(shape), out(shape);
  backend_for(Device::cpu()).where(cond, a, b, expected);
  launch(LaunchConfig{.grid = {1}, .block = {32}}, where_kernel, cond.data<bool>(), a.data<float>(), b.data<float>(),
         out.data<float>(), cuda::strided_layout(a, b, out, cond), 12LL);
  CHECK(values(out) == values(expected));
}

TEST_CASE("cuda arg_reduce, cumsum, gather_last and topk kernels match the CPU backend", "[cuda_kernels]") {
  Backend& cpu = backend_for(Device::cpu());
  const Tensor x = from_vector<float>({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3}, Shape{4, 4});
  for (const bool is_max : {true, false}) {
    for (const int dim : {0, 1}) {
      Shape kept = x.shape();
      kept[dim] = 1;
      const Tensor expected_values(kept), expected_indices(kept, DType::Int64), got_values(kept),
          got_indices(kept, DType::Int64);
      cpu.arg_reduce(is_max, x, dim, expected_values, expected_indices);
      launch(LaunchConfig{.grid = {1}, .block = {32}}, arg_reduce_kernel, is_max, x.data<float>(),
             got_values.data<float>(), got_indices.data<int64_t>(), cuda::reduce_layout(x, got_values), 4LL);
      CHECK(values(got_values) == values(expected_values));  // ties (the 5s and 9s) keep the first index
      CHECK(std::equal(got_indices.data<int64_t>(), got_indices.data<int64_t>() + 4, expected_indices.data<int64_t>()));
    }
  }
  for (const bool reverse : {false, true}) {
    const Tensor expected(x.shape()), got(x.shape());
    cpu.cumsum(x, 0, reverse, expected);
    launch(LaunchConfig{.grid = {1}, .block = {32}}, cumsum_kernel<float>, x.data<float>(), got.data<float>(), 1LL,
           4LL, 4LL, reverse);
    CHECK(values(got) == values(expected));
  }
  const Tensor index = from_vector<int64_t>({2, 0, 3, 3}, Shape{4}), gathered(Shape{4}), expected_gathered(Shape{4});
  cpu.gather_last(x, index, expected_gathered);
  launch(LaunchConfig{.grid = {1}, .block = {32}}, gather_last_kernel, x.data<float>(), index.data<int64_t>(),
         gathered.data<float>(), 4LL, 4);
  CHECK(values(gathered) == values(expected_gathered));
  for (const bool largest : {true, false}) {
    const Tensor expected_values(Shape{4, 3}), expected_indices(Shape{4, 3}, DType::Int64), got_values(Shape{4, 3}),
        got_indices(Shape{4, 3}, DType::Int64);
    cpu.topk(x, 3, largest, expected_values, expected_indices);
    launch(LaunchConfig{.grid = {1}, .block = {32}}, topk_kernel, x.data<float>(), 3, largest, got_values.data<float>(),
           got_indices.data<int64_t>(), 4LL, 4);
    CHECK(values(got_values) == values(expected_values));
    CHECK(std::equal(got_indices.data<int64_t>(), got_indices.data<int64_t>() + 12, expected_indices.data<int64_t>()));
  }
}

TEST_CASE("cuda strided_copy_kernel copies strided views of every element size bit for bit", "[cuda_kernels]") {
  const Tensor floats = varied({4, 6}, -3, 3);
  const Tensor longs = arange(0, 24, 1, DType::Int64).view({4, 6});
  const Tensor bools = ops::binary(BinaryOp::Gt, floats, zeros({4, 6}));
  for (const Tensor& t : {floats, longs, bools}) {
    INFO(dtype_name(t.dtype()));
    const size_t bytes = dtype_size(t.dtype());
    // A transposed source into a contiguous destination (what contiguous() does) ...
    const Tensor source = t.transpose(0, 1), gathered(source.shape(), t.dtype());
    const auto copy = [&](const Tensor& src, const Tensor& dst) {
      const cuda_kernels::StridedLayout layout = cuda::strided_layout(src, dst, dst);
      const LaunchConfig config{.grid = {2}, .block = {32}};
      if (bytes == 1)
        launch(config, strided_copy_kernel<unsigned char>, static_cast<const unsigned char*>(src.raw_data()),
               static_cast<unsigned char*>(dst.raw_data()), layout, (long long)dst.numel());
      else if (bytes == 4)
        launch(config, strided_copy_kernel<unsigned>, static_cast<const unsigned*>(src.raw_data()),
               static_cast<unsigned*>(dst.raw_data()), layout, (long long)dst.numel());
      else
        launch(config, strided_copy_kernel<unsigned long long>, static_cast<const unsigned long long*>(src.raw_data()),
               static_cast<unsigned long long*>(dst.raw_data()), layout, (long long)dst.numel());
    };
    copy(source, gathered);
    const Tensor expected = source.contiguous();
    CHECK(std::memcmp(gathered.raw_data(), expected.raw_data(), size_t(t.numel()) * bytes) == 0);
    // ... and a contiguous source into a transposed destination.
    const Tensor scattered(t.shape(), t.dtype());
    copy(gathered, scattered.transpose(0, 1));
    CHECK(std::memcmp(scattered.raw_data(), t.contiguous().raw_data(), size_t(t.numel()) * bytes) == 0);
  }
}

TEST_CASE("cuda uniform and normal kernels fill tensors with the CPU's numbers", "[cuda_kernels]") {
  const int64_t n = 2001;  // odd: the last Box–Muller pair is cut
  const uint64_t seed = 99, first = 7;
  const Tensor expected_uniform(Shape{n}), expected_normal(Shape{n});
  backend_for(Device::cpu()).uniform(expected_uniform, -0.5, 2.0, seed, first);
  backend_for(Device::cpu()).normal(expected_normal, 1.0, 0.3, seed, first);
  std::vector<float> got_uniform(size_t(n), 0.0f), got_normal(size_t(n), 0.0f);
  launch(LaunchConfig{.grid = {3}, .block = {128}}, uniform_kernel, got_uniform.data(), -0.5, 2.0,
         (unsigned long long)seed, (unsigned long long)first, (long long)n);
  launch(LaunchConfig{.grid = {3}, .block = {128}}, normal_kernel, got_normal.data(), 1.0, 0.3,
         (unsigned long long)seed, (unsigned long long)first, (long long)n);
  CHECK(got_uniform == values(expected_uniform));
  check_close(got_normal, values(expected_normal), 1e-6);
}

TEST_CASE("cuda row_sum_kernel matches the CPU backend's sum over the last dim", "[cuda_kernels]") {
  for (const int64_t cols : {1, 31, 100, 700}) {
    const Tensor x = varied({5, cols}, -2, 2);
    const std::vector<float> expected = values(ops::sum(x, {1}));
    for (Schedule schedule : kSchedules) {
      std::vector<float> out(5, 0.0f);
      launch(LaunchConfig{.grid = {5}, .block = {64}, .shared_bytes = kReductionScratch, .schedule = schedule},
             row_sum_kernel, x.data<float>(), out.data(), int(cols));
      check_close(out, expected, 1e-5);
    }
  }
}

TEST_CASE("cuda reduce_kernel matches the CPU backend for every op over any dims of a strided input",
          "[cuda_kernels]") {
  const Tensor x = varied({3, 4, 5}, 0.5, 2).permute({2, 0, 1});  // [5, 3, 4], strided
  const std::vector<std::vector<int64_t>> dim_sets = {{0}, {1}, {2}, {0, 2}, {0, 1, 2}};
  for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min, ReduceOp::LogSumExp,
                            ReduceOp::Norm2, ReduceOp::Prod}) {
    for (const std::vector<int64_t>& dims : dim_sets) {
      INFO("reduce op " << int(op) << " over " << dims.size() << " dims starting at " << dims[0]);
      Shape out_shape = x.shape();
      for (int64_t d : dims) out_shape[int(d)] = 1;
      const Tensor expected(out_shape), out(out_shape);
      backend_for(Device::cpu()).reduce(op, x, expected);
      launch(LaunchConfig{.grid = {1}, .block = {32}}, reduce_kernel, op, x.data<float>(), out.data<float>(),
             cuda::reduce_layout(x, out), (long long)out.numel());
      check_close(values(out), values(expected), 1e-6);
    }
  }
}

TEST_CASE("cuda softmax_kernel matches the CPU backend's softmax and log-softmax", "[cuda_kernels]") {
  for (const int64_t cols : {1, 33, 257}) {
    const Tensor x = varied({4, cols}, -8, 8);
    for (const bool log : {false, true}) {
      const std::vector<float> expected = values(log ? ops::log_softmax(x, -1) : ops::softmax(x, -1));
      for (Schedule schedule : kSchedules) {
        std::vector<float> y(size_t(4 * cols), 0.0f);
        launch(LaunchConfig{.grid = {4}, .block = {128}, .shared_bytes = kReductionScratch, .schedule = schedule},
               softmax_kernel, x.data<float>(), y.data(), int(cols), log);
        check_close(y, expected, 1e-5);
      }
    }
  }
}

TEST_CASE("cuda softmax_backward_kernel matches the CPU backend for softmax and log-softmax", "[cuda_kernels]") {
  for (const int64_t cols : {1, 45, 300}) {
    const Tensor x = varied({3, cols}, -5, 5), dy = varied({3, cols + 1}, -1, 1).narrow(1, 1, cols).contiguous();
    for (const bool log : {false, true}) {
      const Tensor y = log ? ops::log_softmax(x, -1) : ops::softmax(x, -1);
      const std::vector<float> expected = values(ops::softmax_backward(y, dy, -1, log));
      for (Schedule schedule : kSchedules) {
        std::vector<float> dx(size_t(3 * cols), 0.0f);
        launch(LaunchConfig{.grid = {3}, .block = {64}, .shared_bytes = kReductionScratch, .schedule = schedule},
               softmax_backward_kernel, y.data<float>(), dy.data<float>(), dx.data(), int(cols), log);
        check_close(dx, expected, 1e-5);
      }
    }
  }
}

TEST_CASE("cuda layer_norm_kernel matches the CPU backend's layer norm and its saved statistics", "[cuda_kernels]") {
  for (const int64_t cols : {8, 100, 300}) {
    const Tensor x = varied({3, cols}, -4, 6);
    const Tensor gamma = varied({cols}, 0.5, 1.5), beta = varied({cols}, -1, 1);
    for (const bool affine : {false, true}) {
      const ops::LayerNormResult expected =
          affine ? ops::layer_norm(x, gamma, beta, 1e-5) : ops::layer_norm(x, Tensor(), Tensor(), 1e-5);
      for (Schedule schedule : kSchedules) {
        std::vector<float> y(size_t(3 * cols), 0.0f), mean(3, 0.0f), rstd(3, 0.0f);
        launch(LaunchConfig{.grid = {3}, .block = {96}, .shared_bytes = kReductionScratch, .schedule = schedule},
               layer_norm_kernel, x.data<float>(), affine ? gamma.data<float>() : nullptr,
               affine ? beta.data<float>() : nullptr, 1e-5f, y.data(), mean.data(), rstd.data(), int(cols));
        check_close(y, values(expected.out), 1e-5);
        check_close(mean, values(expected.mean), 1e-5);
        check_close(rstd, values(expected.rstd), 1e-5);
      }
    }
  }
}

TEST_CASE("cuda layer norm backward kernels match the CPU backend's dx, dgamma and dbeta", "[cuda_kernels]") {
  for (const int64_t cols : {8, 130}) {
    const int64_t rows = 5;
    const Tensor x = varied({rows, cols}, -4, 6), dy = varied({rows, cols + 3}, -1, 1).narrow(1, 3, cols).contiguous();
    const Tensor gamma = varied({cols}, 0.5, 1.5), beta = varied({cols}, -1, 1);
    for (const bool affine : {false, true}) {
      const Tensor g = affine ? gamma : Tensor();
      const ops::LayerNormResult forward = ops::layer_norm(x, g, affine ? beta : Tensor(), 1e-5);
      const ops::LayerNormGrads expected = ops::layer_norm_backward(dy, x, g, forward.mean, forward.rstd, affine);
      for (Schedule schedule : kSchedules) {
        std::vector<float> dx(size_t(rows * cols), 0.0f);
        launch(LaunchConfig{.grid = {unsigned(rows)}, .block = {64}, .shared_bytes = kReductionScratch,
                            .schedule = schedule},
               layer_norm_backward_kernel, dy.data<float>(), x.data<float>(), affine ? gamma.data<float>() : nullptr,
               forward.mean.data<float>(), forward.rstd.data<float>(), dx.data(), int(cols));
        check_close(dx, values(expected.dx), 1e-5);
      }
      if (!affine) continue;
      std::vector<float> dgamma(size_t(cols), 0.0f), dbeta(size_t(cols), 0.0f);
      const unsigned column_blocks = unsigned((cols + 63) / 64);  // one thread per column
      launch(LaunchConfig{.grid = {column_blocks}, .block = {64}}, layer_norm_affine_grads_kernel, dy.data<float>(),
             x.data<float>(), forward.mean.data<float>(), forward.rstd.data<float>(), dgamma.data(), dbeta.data(),
             int(rows), int(cols), int(rows));  // one chunk of all rows
      check_close(dgamma, values(expected.dgamma), 1e-5);
      check_close(dbeta, values(expected.dbeta), 1e-5);
      // Two chunks of rows (the second one short), added in order.
      const int chunk_rows = int(rows + 1) / 2;
      std::vector<float> gamma_chunks(size_t(2 * cols), 0.0f), beta_chunks(size_t(2 * cols), 0.0f);
      launch(LaunchConfig{.grid = {column_blocks, 2}, .block = {64}}, layer_norm_affine_grads_kernel, dy.data<float>(),
             x.data<float>(), forward.mean.data<float>(), forward.rstd.data<float>(), gamma_chunks.data(),
             beta_chunks.data(), int(rows), int(cols), chunk_rows);
      for (size_t c = 0; c < size_t(cols); ++c) {
        CHECK(gamma_chunks[c] + gamma_chunks[size_t(cols) + c] == Approx(values(expected.dgamma)[c]).margin(1e-5));
        CHECK(beta_chunks[c] + beta_chunks[size_t(cols) + c] == Approx(values(expected.dbeta)[c]).margin(1e-5));
      }
    }
  }
}

TEST_CASE("cuda cross-entropy kernels match the CPU backend's loss, nll, count, lse and gradient",
          "[cuda_kernels]") {
  const int64_t rows = 6, classes = 203, ignore = 1;
  const Tensor logits = varied({rows, classes}, -6, 6);
  const Tensor targets = from_vector<int64_t>({5, ignore, 0, 202, 77, 5}, Shape{rows});
  const double epsilon = 0.1, scale = 0.25;
  const ops::CrossEntropyResult expected =
      ops::label_smoothed_cross_entropy(logits, targets, epsilon, ignore, /*with_grad=*/true);
  const Tensor expected_grad = ops::mul(expected.grad, scale);
  for (Schedule schedule : kSchedules) {
    std::vector<float> lse(size_t(rows), 0.0f);
    std::vector<double> row_loss(size_t(rows), 0.0), row_nll(size_t(rows), 0.0);
    double loss = 0.0, nll = 0.0, count = 0.0;
    int64_t first_bad = 0;
    launch(LaunchConfig{.grid = {unsigned(rows)}, .block = {64}, .shared_bytes = 32 * sizeof(double),
                        .schedule = schedule},
           label_smoothed_ce_rows_kernel, logits.data<float>(), targets.data<int64_t>(), int(classes), epsilon,
           ignore, lse.data(), row_loss.data(), row_nll.data());
    launch(LaunchConfig{.grid = {1}, .block = {kCrossEntropyTotalsThreads}, .shared_bytes = 32 * sizeof(double),
                        .schedule = schedule},
           label_smoothed_ce_totals_kernel, targets.data<int64_t>(), (long long)rows, int(classes), ignore,
           row_loss.data(), row_nll.data(), &loss, &nll, &count, &first_bad);
    check_close(lse, values(expected.lse), 1e-6);
    CHECK(loss == Approx(expected.loss.item()).epsilon(1e-6));
    CHECK(nll == Approx(expected.nll.item()).epsilon(1e-6));
    CHECK(count == double(expected.count));
    CHECK(first_bad == -1);
  }
  std::vector<float> grad(size_t(rows * classes), -1.0f);
  launch(LaunchConfig{.grid = {4}, .block = {128}}, label_smoothed_ce_backward_kernel, logits.data<float>(),
         targets.data<int64_t>(), expected.lse.data<float>(), float(scale * epsilon / double(classes)),
         float(scale * (1.0 - epsilon)), float(scale), ignore, grad.data(), (long long)rows, int(classes));
  check_close(grad, values(expected_grad), 1e-6);

  // Totals over more rows than the block has threads (runs of several rows each), and the first
  // target out of range in row order (the backend names it in its error), here in a later run.
  const int64_t many = 2500;
  std::vector<int64_t> many_targets(size_t(many), 3);
  std::vector<double> row_loss(static_cast<size_t>(many), 0.0), row_nll(static_cast<size_t>(many), 1.0);
  double expected_loss = 0.0, expected_count = 0.0;
  for (int64_t r = 0; r < many; ++r) {
    row_loss[size_t(r)] = 0.5 * double(r);
    if (r % 7 == 0) many_targets[size_t(r)] = ignore;
    else expected_loss += 0.5 * double(r), expected_count += 1.0;
  }
  many_targets[1703] = classes;  // out of range (1703 % 7 != 0: counted like any row)
  many_targets[2302] = -3;
  for (Schedule schedule : kSchedules) {
    double loss = 0.0, nll = 0.0, count = 0.0;
    int64_t first_bad = -1;
    launch(LaunchConfig{.grid = {1}, .block = {kCrossEntropyTotalsThreads}, .shared_bytes = 32 * sizeof(double),
                        .schedule = schedule},
           label_smoothed_ce_totals_kernel, many_targets.data(), (long long)many, int(classes), ignore,
           row_loss.data(), row_nll.data(), &loss, &nll, &count, &first_bad);
    CHECK(loss == expected_loss);  // halves of integers: exact in any order
    CHECK(nll == expected_count);
    CHECK(count == expected_count);
    CHECK(first_bad == 1703);
  }
}

TEST_CASE("cuda training-step kernels match the CPU backend's Adam, NAG, moving average, sum of squares and scaling over "
          "a group",
          "[cuda_kernels]") {
  // Tensors of several blocks, of less than one, of none, and a last block cut short; each
  // parameter with its own step size, as after parameters missed updates.
  const std::vector<int64_t> sizes = {5000, 7, 0, 2 * kGroupBlockElements + 3};
  std::vector<AdamTensors> adam_cpu, adam_gpu;
  std::vector<NagTensors> nag_cpu, nag_gpu;
  std::vector<AverageTensors> average_cpu, average_gpu;
  std::vector<Tensor> grads;
  AdamGroup adam;
  NagGroup nag;
  AverageGroup moving;
  FloatGroup squares;
  for (size_t t = 0; t < sizes.size(); ++t) {
    const int64_t n = sizes[t];
    const Tensor grad = varied({n}, -1, 1), param = varied({n}, -2, 2), m = varied({n}, -0.1, 0.1),
                 v = varied({n}, 0, 0.01);
    const AdamUpdate a{.beta1 = 0.9f, .beta2 = 0.98f, .one_minus_beta1 = 0.1f, .one_minus_beta2 = 0.02f,
                       .eps = 1e-8f, .decay = -1e-5f, .neg_step_size = -7e-4f * float(t + 1), .decays = t % 2 == 0,
                       .grad_scale = t % 2 == 0 ? 1.0f : 1.0f / 381.0f};
    adam_cpu.push_back({param.clone(), grad, m.clone(), v.clone(), a});
    adam_gpu.push_back({param, grad, m, v, a});
    adam.param[t] = param.data<float>(), adam.grad[t] = grad.data<float>(), adam.exp_avg[t] = m.data<float>();
    adam.exp_avg_sq[t] = v.data<float>(), adam.update[t] = a;
    adam.blocks.add(n);

    const NagUpdate b{.shrink = 0.9999f, .buffer_to_param = 0.97f, .grad_to_param = -0.0199f * float(t + 1),
                      .buffer_decay = 0.985f, .grad_to_buffer = -0.01f, .decays = t % 2 == 1,
                      .grad_scale = t % 2 == 0 ? 1.0f / 381.0f : 1.0f};
    const Tensor theta = varied({n}, -2, 2), buffer = varied({n}, -0.1, 0.1);
    nag_cpu.push_back({theta.clone(), grad, buffer.clone(), b});
    nag_gpu.push_back({theta, grad, buffer, b});
    nag.param[t] = theta.data<float>(), nag.grad[t] = grad.data<float>(), nag.buffer[t] = buffer.data<float>();
    nag.update[t] = b;
    nag.blocks.add(n);

    const Tensor average = varied({n}, -1, 1);
    average_cpu.push_back({average.clone(), theta});
    average_gpu.push_back({average, theta});
    moving.average[t] = average.data<float>(), moving.value[t] = theta.data<float>();
    moving.blocks.add(n);

    grads.push_back(grad);
    squares.x[t] = grad.data<float>();
    squares.blocks.add(n);
  }
  const auto blocks = unsigned(adam.blocks.blocks());
  CHECK(blocks == 2 + 1 + 0 + 3);
  ops::adam_update_(adam_cpu);
  launch(LaunchConfig{.grid = {blocks}, .block = {128}}, adam_update_kernel, adam);
  ops::nag_update_(nag_cpu);
  launch(LaunchConfig{.grid = {blocks}, .block = {128}}, nag_update_kernel, nag);
  ops::moving_average_(average_cpu, 0.999);
  launch(LaunchConfig{.grid = {blocks}, .block = {128}}, moving_average_kernel, moving, 0.999f, float(1.0 - 0.999));
  for (size_t t = 0; t < sizes.size(); ++t) {
    check_close(values(average_gpu[t].average), values(average_cpu[t].average), 1e-6);
    check_close(values(adam_gpu[t].param), values(adam_cpu[t].param), 1e-6);
    check_close(values(adam_gpu[t].exp_avg), values(adam_cpu[t].exp_avg), 1e-6);
    check_close(values(adam_gpu[t].exp_avg_sq), values(adam_cpu[t].exp_avg_sq), 1e-6);
    check_close(values(nag_gpu[t].param), values(nag_cpu[t].param), 1e-6);
    check_close(values(nag_gpu[t].buffer), values(nag_cpu[t].buffer), 1e-6);
  }

  const Tensor cpu_total = full(Shape{}, 0.5, DType::Float64);
  ops::add_sum_of_squares_(cpu_total, grads);
  std::vector<double> partial(blocks, 0.0);
  for (Schedule schedule : kSchedules) {
    double total = 0.5;
    launch(LaunchConfig{.grid = {blocks}, .block = {64}, .shared_bytes = 32 * sizeof(double), .schedule = schedule},
           sum_of_squares_partials_kernel, squares, partial.data());
    launch(LaunchConfig{.grid = {1}, .block = {64}, .shared_bytes = 32 * sizeof(double), .schedule = schedule},
           add_partials_kernel, static_cast<const double*>(partial.data()), (long long)blocks, &total);
    CHECK(total == Approx(cpu_total.item()).epsilon(1e-12));
  }

  std::vector<float> x = {1.0f, -2.0f, 3.0e30f}, y = {4.0f};
  FloatGroup scaled;
  scaled.x[0] = x.data(), scaled.x[1] = y.data();
  scaled.blocks.add(3), scaled.blocks.add(1);
  float flag = 0.0f;
  launch(LaunchConfig{.grid = {2}, .block = {32}}, scale_check_finite_kernel, scaled, 0.5f, &flag);
  CHECK(x == std::vector<float>{0.5f, -1.0f, 1.5e30f});
  CHECK(y == std::vector<float>{2.0f});
  CHECK(flag == 0.0f);
  launch(LaunchConfig{.grid = {2}, .block = {32}}, scale_check_finite_kernel, scaled, 1e10f, &flag);
  CHECK(flag == 1.0f);
}
