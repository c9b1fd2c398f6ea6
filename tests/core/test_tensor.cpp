// Tensor handle, views and copies (core/tensor.hpp): views share storage and see writes,
// copies convert dtypes and broadcast, bad usage names shapes and indices.
#include <catch.hpp>

#include "core/tensor.hpp"

using namespace attn;
using Catch::Contains;

namespace {

// A float64 tensor holding 0, 1, 2, ... in row-major order.
Tensor iota(const Shape& shape) { return arange(0, double(shape.numel()), 1, DType::Float64).view(shape); }

}  // namespace

TEST_CASE("a new tensor is contiguous with row-major strides") {
  Tensor t({2, 3, 4}, DType::Float32);
  CHECK(t.shape() == Shape{2, 3, 4});
  CHECK(t.strides() == Shape{12, 4, 1});
  CHECK(t.is_contiguous());
  CHECK(t.numel() == 24);
  CHECK(t.nbytes() == 96);
  CHECK(t.size(-1) == 4);
  CHECK(t.device() == Device::cpu());
  CHECK(reinterpret_cast<uintptr_t>(t.raw_data()) % 64 == 0);
}

TEST_CASE("at, set, item and to_vector read and write elements") {
  Tensor t = zeros({2, 3}, DType::Int64);
  t.set({1, 2}, 7);
  CHECK(t.at({1, 2}) == 7);
  CHECK(t.to_vector() == std::vector<double>{0, 0, 0, 0, 0, 7});
  CHECK(scalar_tensor(2.5, DType::Float64).item() == 2.5);
  REQUIRE_THROWS_WITH(t.at({2, 0}), Contains("index 2 out of range [0, 2)"));
  REQUIRE_THROWS_WITH(t.at({0}), Contains("[2, 3]"));
  REQUIRE_THROWS_WITH(t.item(), Contains("[2, 3]"));
}

TEST_CASE("views share storage and see each other's writes") {
  Tensor base = iota({3, 4});
  Tensor tr = base.transpose(0, 1);
  CHECK(tr.shape() == Shape{4, 3});
  CHECK_FALSE(tr.is_contiguous());
  CHECK(tr.at({3, 1}) == base.at({1, 3}));
  CHECK(tr.shares_storage(base));

  tr.set({2, 0}, 100);
  CHECK(base.at({0, 2}) == 100);

  Tensor row = base.select(0, 1);
  CHECK(row.to_vector() == std::vector<double>{4, 5, 6, 7});
  Tensor cols = base.narrow(1, 1, 2);
  CHECK(cols.to_vector() == std::vector<double>{1, 100, 5, 6, 9, 10});
  Tensor stepped = base.slice(1, 0, 4, 2);
  CHECK(stepped.to_vector() == std::vector<double>{0, 100, 4, 6, 8, 10});
  Tensor flat = base.view({-1});
  flat.set({5}, -1);
  CHECK(base.at({1, 1}) == -1);
  CHECK(base.permute({1, 0}).strides() == Shape{1, 4});
  CHECK(base.unsqueeze(1).shape() == Shape{3, 1, 4});
  CHECK(base.unsqueeze(-1).shape() == Shape{3, 4, 1});
  CHECK(base.unsqueeze(0).squeeze(0).shape() == Shape{3, 4});
  CHECK(base.flatten().shape() == Shape{12});
}

TEST_CASE("expand broadcasts with stride 0") {
  Tensor col = iota({3, 1});
  Tensor e = col.expand({2, 3, 4});
  CHECK(e.shape() == Shape{2, 3, 4});
  CHECK(e.strides() == Shape{0, 1, 0});
  CHECK(e.at({1, 2, 3}) == 2);
  CHECK(col.expand({-1, 5}).shape() == Shape{3, 5});
  REQUIRE_THROWS_WITH(col.expand({2, 4}), Contains("[3, 1]") && Contains("[2, 4]"));
}

TEST_CASE("view needs compatible strides; reshape copies when it must") {
  Tensor base = iota({2, 3, 4});
  Tensor v = base.view({6, 4});
  CHECK(v.shares_storage(base));
  Tensor merged_inner = base.narrow(2, 0, 2).view({2, 3, 2});  // no merge needed
  CHECK(merged_inner.shares_storage(base));
  Tensor t = base.transpose(1, 2);  // [2, 4, 3]
  REQUIRE_THROWS_WITH(t.view({2, 12}), Contains("[2, 4, 3]") && Contains("[2, 12]"));
  Tensor r = t.reshape({2, 12});
  CHECK_FALSE(r.shares_storage(base));
  CHECK(r.at({0, 1}) == 4);  // t[0, 0, 1] = base[0, 1, 0]
  // Splitting a transposed dim is a view.
  Tensor split = t.view({2, 2, 2, 3});
  CHECK(split.shares_storage(base));
  CHECK(split.at({1, 1, 0, 2}) == base.at({1, 2, 2}));
  REQUIRE_THROWS_WITH(base.view({5, -1}), Contains("[2, 3, 4]") && Contains("[5, -1]"));
  REQUIRE_THROWS_WITH(base.reshape({7}), Contains("[2, 3, 4]") && Contains("[7]"));
}

TEST_CASE("views reject bad dims and ranges") {
  Tensor t = zeros({2, 3});
  REQUIRE_THROWS_WITH(t.narrow(1, 2, 2), Contains("[2, 3]"));
  REQUIRE_THROWS_WITH(t.select(0, 2), Contains("index 2"));
  REQUIRE_THROWS_WITH(t.transpose(0, 2), Contains("dim 2 out of range"));
  REQUIRE_THROWS_WITH(t.permute({0, 0}), Contains("repeated"));
}

TEST_CASE("contiguous copies only when needed; clone always copies") {
  Tensor base = iota({3, 4});
  CHECK(base.contiguous().shares_storage(base));
  Tensor tr = base.transpose(0, 1).contiguous();
  CHECK_FALSE(tr.shares_storage(base));
  CHECK(tr.is_contiguous());
  CHECK(tr.to_vector() == std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  Tensor c = base.clone();
  CHECK_FALSE(c.shares_storage(base));
  c.set({0, 0}, 42);
  CHECK(base.at({0, 0}) == 0);
}

TEST_CASE("contiguous() of batched transposes and permutes (tiled copy path)") {
  Tensor base = iota({3, 37, 45, 2});
  for (const std::vector<int>& perm : {std::vector<int>{0, 2, 1, 3}, {3, 0, 2, 1}, {1, 3, 2, 0}, {2, 1, 0, 3}, {0, 2, 3, 1}}) {
    Tensor p = base.permute(perm);
    Tensor c = p.contiguous();
    REQUIRE(c.is_contiguous());
    const std::vector<double> values = c.to_vector();
    int64_t flat = 0, mismatches = 0;
    for (int64_t a = 0; a < p.size(0); ++a)
      for (int64_t b = 0; b < p.size(1); ++b)
        for (int64_t d = 0; d < p.size(2); ++d)
          for (int64_t e = 0; e < p.size(3); ++e) mismatches += values[size_t(flat++)] != p.at({a, b, d, e});
    CHECK(mismatches == 0);
  }
  Tensor f = iota({5, 300, 200}).to(DType::Float32).transpose(1, 2).to(DType::Float64);  // converting tiled copy
  CHECK(f.at({4, 199, 299}) == 4 * 60000 + 299 * 200 + 199);
  CHECK(f.at({2, 17, 3}) == 2 * 60000 + 3 * 200 + 17);
}

TEST_CASE("to(dtype) converts values") {
  Tensor f = from_vector<float>({1.5f, -2.75f, 3.0f}, {3});
  CHECK(f.to(DType::Float32).shares_storage(f));
  CHECK(f.to(DType::Float64).to_vector() == std::vector<double>{1.5, -2.75, 3.0});
  CHECK(f.to(DType::Int32).to_vector() == std::vector<double>{1, -2, 3});
  CHECK(f.to(DType::Bool).to_vector() == std::vector<double>{1, 1, 1});
  Tensor b = from_vector<bool>({true, false}, {2});
  CHECK(b.to(DType::Int64).to_vector() == std::vector<double>{1, 0});
}

TEST_CASE("copy_ broadcasts and converts into a strided destination") {
  Tensor dst = zeros({3, 4}, DType::Float64);
  Tensor row = from_vector<float>({1, 2, 3}, {3, 1});
  dst.transpose(0, 1).copy_(row.view({1, 3}));  // writes column j of dst^T = row j of dst
  CHECK(dst.to_vector() == std::vector<double>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  REQUIRE_THROWS_WITH(dst.copy_(zeros({2})), Contains("[2]") && Contains("[3, 4]"));
}

TEST_CASE("copy_ from an overlapping view of itself") {
  Tensor t = iota({3, 3});
  t.copy_(t.transpose(0, 1));
  CHECK(t.to_vector() == std::vector<double>{0, 3, 6, 1, 4, 7, 2, 5, 8});
}

TEST_CASE("fill_ writes only the view's elements") {
  Tensor t = zeros({4, 4}, DType::Int32);
  t.slice(0, 0, 4, 2).narrow(1, 1, 2).fill_(5);
  CHECK(t.to_vector() == std::vector<double>{0, 5, 5, 0, 0, 0, 0, 0, 0, 5, 5, 0, 0, 0, 0, 0});
}

TEST_CASE("copy and fill of large strided tensors use all elements (parallel path)") {
  Tensor big = iota({300, 400});
  Tensor t = big.transpose(0, 1).contiguous();
  for (int64_t i : {0, 17, 299})
    for (int64_t j : {0, 123, 399}) CHECK(t.at({j, i}) == double(i * 400 + j));
  Tensor f = zeros({300, 400}, DType::Float32);
  f.narrow(1, 1, 398).fill_(2);
  double total = 0;
  for (double v : f.to_vector()) total += v;
  CHECK(total == 2.0 * 300 * 398);
}

TEST_CASE("empty and 0-d tensors") {
  Tensor e = zeros({0, 3});
  CHECK(e.numel() == 0);
  CHECK(e.contiguous().numel() == 0);
  CHECK(e.clone().shape() == Shape{0, 3});
  CHECK(e.to_vector().empty());
  Tensor s = scalar_tensor(3);
  CHECK(s.dim() == 0);
  CHECK(s.reshape({1, 1}).at({0, 0}) == 3);
  CHECK(s.expand({2, 2}).to_vector() == std::vector<double>{3, 3, 3, 3});
}

TEST_CASE("creation functions") {
  CHECK(arange(0, 5).to_vector() == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(arange(1, 2, 0.25, DType::Float64).to_vector() == std::vector<double>{1, 1.25, 1.5, 1.75});
  CHECK(arange(3, 0, -1).to_vector() == std::vector<double>{3, 2, 1});
  CHECK(full({2}, 1.5, DType::Float64).to_vector() == std::vector<double>{1.5, 1.5});
  CHECK(ones({2}, DType::Int32).dtype() == DType::Int32);
  CHECK(from_doubles({1, 2}, {2, 1}, DType::Int64).at({1, 0}) == 2);
  REQUIRE_THROWS_WITH(from_vector<float>({1, 2, 3}, {2, 2}), Contains("3 values") && Contains("[2, 2]"));
}

TEST_CASE("str shows dtype, shape and values") {
  CHECK(from_vector<int64_t>({1, 2, 3, 4}, {2, 2}).str() == "Tensor(int64[2, 2]) [[1, 2], [3, 4]]");
  CHECK(Tensor().str() == "Tensor(undefined)");
}

TEST_CASE("data_only drops the autograd slot but shares data") {
  Tensor t = zeros({2});
  Tensor d = t.data_only();
  CHECK(d.shares_storage(t));
  CHECK(d.autograd_meta() == nullptr);
}
