// Tests for core/safetensors: round trips of every dtype, byte-exact compatibility with the
// format (a file written by hand, and the writer's bytes), and a clear error for every
// malformed input, including every truncation of a valid file.
#include <catch.hpp>

#include <cstring>
#include <filesystem>

#include "core/safetensors.hpp"
#include "test_support.hpp"

using namespace attn;
using Catch::Matchers::Contains;
using test::read_file;
using test::TempDir;
using test::write_file;
namespace fs = std::filesystem;

namespace {

template <typename T>
std::string le_bytes(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

// 8-byte little-endian header length, header, data: a safetensors file assembled by hand.
std::string assemble(const std::string& header, const std::string& data) {
  return le_bytes<uint64_t>({header.size()}) + header + data;
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

// Writes `bytes` and expects load_safetensors to throw an attn::Error naming the file and `problem`.
void expect_rejected(const TempDir& tmp, const std::string& bytes, const std::string& problem) {
  const std::string path = tmp.file("bad.safetensors");
  write_file(path, bytes);
  INFO("expected problem: " << problem);
  CHECK_THROWS_MATCHES(load_safetensors(path), Error, Catch::Matchers::Predicate<Error>([&](const Error& e) {
                         std::string m = e.what();
                         return m.find(path) != std::string::npos && m.find(problem) != std::string::npos;
                       }, "names the file and the problem"));
}

const std::string kF32Pair = R"("x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

}  // namespace

TEST_CASE("every dtype round-trips exactly, with metadata", "[safetensors]") {
  TempDir tmp;
  const std::string path = tmp.file("all.safetensors");
  Tensor f32 = from_vector<float>({1.5f, -2.25f, 3.0e-38f, 7.0f, 0.1f, -0.0f}, {2, 3});
  Tensor f64 = from_vector<double>({0.1, -1e300, 2.5}, {3});
  Tensor i32 = from_vector<int32_t>({INT32_MIN, -1, 0, INT32_MAX}, {2, 2});
  Tensor i64 = from_vector<int64_t>({INT64_MIN, (int64_t(1) << 53) + 1, INT64_MAX}, {3, 1});
  Tensor flags = from_vector<bool>({true, false, true}, {3});
  Tensor scalar = from_vector<float>({42.0f}, Shape{});
  Tensor empty_tensor = from_vector<float>({}, {0, 4});
  Tensor transposed = f32.transpose(0, 1);  // non-contiguous: stored in its logical order
  save_safetensors(path,
                   {{"f32", f32}, {"f64", f64}, {"i32", i32}, {"i64", i64}, {"flags", flags}, {"scalar", scalar},
                    {"empty", empty_tensor}, {"transposed", transposed}},
                   {{"format", "pt"}, {"note", "ünïcode ok"}});

  SafetensorsFile loaded = load_safetensors(path);
  REQUIRE(loaded.tensors.size() == 8);
  CHECK(loaded.tensors[0].first == "f32");  // file order = save order
  CHECK(loaded.tensors[7].first == "transposed");
  CHECK(loaded.metadata == TensorFileMetadata{{"format", "pt"}, {"note", "ünïcode ok"}});

  CHECK(loaded.at("f32").shape() == Shape{2, 3});
  CHECK(values_of<float>(loaded.at("f32")) == values_of<float>(f32));
  CHECK(std::signbit(values_of<float>(loaded.at("f32"))[5]));
  CHECK(values_of<double>(loaded.at("f64")) == values_of<double>(f64));
  CHECK(values_of<int32_t>(loaded.at("i32")) == values_of<int32_t>(i32));
  CHECK(values_of<int64_t>(loaded.at("i64")) == values_of<int64_t>(i64));
  CHECK(loaded.at("i64").shape() == Shape{3, 1});
  CHECK(loaded.at("flags").dtype() == DType::Bool);
  CHECK(loaded.at("flags").to_vector() == std::vector<double>{1, 0, 1});
  CHECK(loaded.at("scalar").dim() == 0);
  CHECK(loaded.at("scalar").item() == 42.0);
  CHECK(loaded.at("empty").shape() == Shape{0, 4});
  CHECK(loaded.at("transposed").shape() == Shape{3, 2});
  CHECK(loaded.at("transposed").to_vector() == transposed.to_vector());
  CHECK(loaded.contains("f64"));
  CHECK_FALSE(loaded.contains("nope"));
  CHECK_THROWS_WITH(loaded.at("nope"), Contains(path) && Contains("'nope'"));
}

TEST_CASE("a file written by hand, as another implementation would, is read", "[safetensors]") {
  TempDir tmp;
  const std::string path = tmp.file("hand.safetensors");
  // Tensors listed out of data order, metadata last, header padded with spaces.
  const std::string header =
      R"({"b":{"dtype":"F32","shape":[2,1],"data_offsets":[16,24]},)"
      R"("a":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},"__metadata__":{"format":"pt"}}    )";
  write_file(path, assemble(header, le_bytes<int64_t>({1, -2}) + std::string("\x00\x00\xc0\x3f\x00\x00\x80\xbe", 8)));

  SafetensorsFile f = load_safetensors(path);
  REQUIRE(f.tensors.size() == 2);
  CHECK(f.tensors[0].first == "a");
  CHECK(values_of<int64_t>(f.at("a")) == std::vector<int64_t>{1, -2});
  CHECK(f.at("b").shape() == Shape{2, 1});
  CHECK(values_of<float>(f.at("b")) == std::vector<float>{1.5f, -0.25f});
  CHECK(f.metadata.at("format") == "pt");
}

TEST_CASE("the writer produces the exact bytes of the format", "[safetensors]") {
  TempDir tmp;
  const std::string path = tmp.file("exact.safetensors");
  save_safetensors(path, {{"w", from_vector<float>({1.5f, -0.25f}, {1, 2})}, {"n", from_vector<int32_t>({7}, {1})}},
                   {{"k", "v"}});
  std::string header =
      R"({"__metadata__":{"k":"v"},"w":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},)"
      R"("n":{"dtype":"I32","shape":[1],"data_offsets":[8,12]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  const std::string expected = assemble(header, le_bytes<float>({1.5f, -0.25f}) + le_bytes<int32_t>({7}));
  const std::string written = read_file(path);
  CHECK(written.size() % 8 == 4);  // 8 + padded header = multiple of 8, then 12 data bytes
  CHECK(written == expected);
}

TEST_CASE("saving replaces the file atomically and leaves no temp files", "[safetensors]") {
  TempDir tmp;
  const std::string path = tmp.file("model.safetensors");
  save_safetensors(path, {{"x", from_vector<float>({1, 2}, {2})}});
  save_safetensors(path, {{"y", from_vector<double>({3}, {1})}});
  SafetensorsFile f = load_safetensors(path);
  CHECK_FALSE(f.contains("x"));
  CHECK(f.at("y").item() == 3.0);
  CHECK(std::distance(fs::directory_iterator(tmp.dir), fs::directory_iterator()) == 1);
  CHECK((fs::status(path).permissions() & fs::perms::others_read) != fs::perms::none);
}

TEST_CASE("saving rejects bad names and unwritable places", "[safetensors]") {
  TempDir tmp;
  const std::string path = tmp.file("out.safetensors");
  Tensor t = from_vector<float>({1}, {1});
  CHECK_THROWS_WITH(save_safetensors(path, {{"a", t}, {"a", t}}), Contains("'a' appears twice"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"__metadata__", t}}), Contains("__metadata__"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"u", Tensor()}}), Contains("'u' is undefined"));
  CHECK_THROWS_WITH(save_safetensors(tmp.file("missing/dir/x.safetensors"), {{"a", t}}), Contains("temp file"));
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("malformed files are rejected with the file and the problem named", "[safetensors]") {
  TempDir tmp;
  const std::string two_floats = le_bytes<float>({1, 2});
  CHECK_THROWS_WITH(load_safetensors(tmp.file("absent.safetensors")), Contains("absent.safetensors") && Contains("cannot open"));
  expect_rejected(tmp, "", "shorter than the 8-byte header length");
  expect_rejected(tmp, "\x05\x00\x00", "shorter than the 8-byte header length");
  expect_rejected(tmp, le_bytes<uint64_t>({1000}) + "{}", "header length 1000 exceeds");
  expect_rejected(tmp, le_bytes<uint64_t>({UINT64_MAX}) + "{}", "exceeds");
  expect_rejected(tmp, assemble("{\"x\":", ""), "not valid JSON");
  expect_rejected(tmp, assemble("[1,2]", ""), "must be a JSON object");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", "abcd"),
                  "unsupported dtype \"F16\"");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":7,"shape":[2],"data_offsets":[0,8]}})", two_floats),
                  "unsupported dtype 7");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":"F32","data_offsets":[0,8]}})", two_floats), "missing 'shape'");
  expect_rejected(tmp, assemble(R"({"x":[1]})", two_floats), "tensor 'x': expected an object");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", two_floats),
                  "non-size");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}})", two_floats),
                  "at most 8 sizes");
  expect_rejected(tmp,
                  assemble(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", two_floats),
                  "shape too large");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", two_floats),
                  "needs 12 bytes but data_offsets [0,8] span 8");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", two_floats),
                  "0 <= begin <= end");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", two_floats),
                  "data_offsets must be");
  expect_rejected(tmp, assemble("{" + kF32Pair + "}", "abcd"), "run past the 4 data bytes");
  expect_rejected(tmp,
                  assemble(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                           R"("y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                           two_floats),
                  "overlaps");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", two_floats),
                  "gap in the data");
  expect_rejected(tmp, assemble("{" + kF32Pair + "}", two_floats + "junk"), "cover 8 data bytes but the file holds 12");
  expect_rejected(tmp, assemble("{" + kF32Pair + R"(,"__metadata__":{"a":1}})", two_floats),
                  "__metadata__ value of 'a' must be a string");
  expect_rejected(tmp, assemble("{" + kF32Pair + R"(,"__metadata__":[]})", two_floats), "__metadata__ must be an object");
  expect_rejected(tmp, assemble(R"({"m":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", std::string("\x01\x02", 2)),
                  "BOOL element 1 has byte value 2");
  // A repeated key, at the top or inside a tensor's entry, is refused rather than last-wins.
  expect_rejected(tmp, assemble("{" + kF32Pair + "," + kF32Pair + "}", two_floats + two_floats),
                  "the key 'x' twice");
  expect_rejected(tmp, assemble(R"({"x":{"dtype":"I32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})", two_floats),
                  "the key 'dtype' twice");
}

TEST_CASE("every truncation of a valid file is rejected, never a crash", "[safetensors]") {
  TempDir tmp;
  const std::string good = tmp.file("good.safetensors");
  save_safetensors(good, {{"a", from_vector<float>({1, 2, 3}, {3})}, {"b", from_vector<int64_t>({4, 5}, {2})}},
                   {{"epoch", "3"}});
  const std::string bytes = read_file(good);
  for (size_t length = 0; length < bytes.size(); ++length) {
    const std::string path = tmp.file("torn.safetensors");
    write_file(path, bytes.substr(0, length));
    INFO("truncated to " << length << " of " << bytes.size() << " bytes");
    CHECK_THROWS_WITH(load_safetensors(path), Contains(path));
  }
  CHECK(load_safetensors(good).tensors.size() == 2);
}
