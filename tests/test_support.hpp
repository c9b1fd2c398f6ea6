// Helpers shared by the tests of every layer: a fresh temporary folder per test, whole files
// as bytes, paths into the test vectors (tests/vectors/, see its README; docs/design.md §7),
// and element-wise closeness of tensors. Header-only and free of attnlab headers, so that
// the data/ tests, which do not link the tensor engine, can include it too.
#pragma once
#include <catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace attn::test {

// A fresh folder (unique per process and per instance), removed with its contents afterwards.
struct TempDir {
  std::filesystem::path dir;

  TempDir() {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          ("attnlab_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
  }
  ~TempDir() { std::filesystem::remove_all(dir); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (dir / name).string(); }
};

// Ends the test program as skipped, printing why: exit code 77, which ctest reports as
// "Skipped" (tests/CMakeLists.txt), never as passed. For a program that cannot run at all
// here (no GPU, no mpirun, no browser).
[[noreturn]] inline void skip_program(const std::string& reason) {
  std::cout << "SKIPPED: " << reason << std::endl;
  std::exit(77);
}

// skip_program for a program that needs a GPU, except that ATTNLAB_REQUIRE_GPU=1 (set on GPU
// machines, where a silent skip would hide a broken set-up) makes it a failure, exit code 1.
[[noreturn]] inline void skip_gpu_program(const std::string& reason) {
  const char* require = std::getenv("ATTNLAB_REQUIRE_GPU");
  if (require != nullptr && std::string(require) == "1") {
    std::cout << "FAILED (ATTNLAB_REQUIRE_GPU=1): " << reason << std::endl;
    std::exit(1);
  }
  skip_program(reason);
}

// The path of a file under tests/vectors, e.g. vector_path("own/bpe/codes.200").
inline std::string vector_path(const std::string& relative) {
  return ATTNLAB_TEST_VECTORS "/" + relative;
}

// The whole file as bytes; fails the test naming the file when it cannot be opened.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  INFO("reading " << path);
  REQUIRE(in.good());
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// Writes `bytes` to `path` exactly (binary) and returns the path as a string.
inline std::string write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  INFO("writing " << path.string());
  REQUIRE(out.good());
  return path.string();
}

// Deterministic, varied values: scale·sin(a·i + b) for i = 0 … n − 1.
inline std::vector<float> wave(int64_t n, double a, double b, double scale = 1.0) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = float(scale * std::sin(a * double(i) + b));
  return out;
}

// |actual[i] − expected[i]| ≤ tolerance for every i; the first element that is not fails the
// test naming its index (and `shape`, when given).
inline void check_close(const std::vector<double>& actual, const std::vector<double>& expected, double tolerance,
                        const std::string& shape = "") {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i << (shape.empty() ? "" : " of " + shape));
    REQUIRE(std::abs(actual[i] - expected[i]) <= tolerance);
  }
}

// The same for two tensors (anything with shape() and to_vector(), i.e. attn::Tensor), which
// must have the same shape.
template <typename TensorLike>
void check_close(const TensorLike& actual, const TensorLike& expected, double tolerance) {
  REQUIRE(actual.shape() == expected.shape());
  check_close(actual.to_vector(), expected.to_vector(), tolerance, actual.shape().str());
}

}  // namespace attn::test
