// The emulated CUDA runtime (cuda/emulator/runtime/) itself: device memory that copies can
// tell from host memory, whose reads by the host are counted, and which host code cannot
// touch directly (as on a GPU, where that is a crash), CUDA's errors for bad
// arguments, and cuBLAS's column-major batched product (transposes, leading dimensions wider
// than the matrix, broadcast batches, the bf16 compute mode) against a plain float64 loop.
#include <catch.hpp>
#include <cublas_v2.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "core/bfloat16.hpp"
#include "core/ops.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/emulator/runtime/host_reads.hpp"

using namespace attn;

namespace {

// A device copy of `values`, freed with the object.
struct DeviceBuffer {
  float* data = nullptr;
  explicit DeviceBuffer(const std::vector<float>& values) {
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&data), values.size() * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(data, values.data(), values.size() * sizeof(float), cudaMemcpyDefault, nullptr) ==
            cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data); }
  std::vector<float> read(size_t n) const {
    std::vector<float> out(n);
    REQUIRE(cudaMemcpyAsync(out.data(), data, n * sizeof(float), cudaMemcpyDefault, nullptr) == cudaSuccess);
    return out;
  }
};

std::vector<float> varied(size_t n, double phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(std::sin(1.3 * double(i) + phase));
  return v;
}

// Element (r, c) of a column-major matrix with leading dimension ld, or of its transpose.
double element(const std::vector<float>& m, size_t offset, int ld, bool transposed, int r, int c) {
  return transposed ? m[offset + size_t(r) * size_t(ld) + size_t(c)] : m[offset + size_t(c) * size_t(ld) + size_t(r)];
}

}  // namespace

TEST_CASE("the emulated runtime counts the copies from device into host memory, and only those",
          "[cuda_emulated]") {
  REQUIRE(cuda::register_cuda_backend());
  const Tensor x = full({4, 3}, 1.5);
  const uint64_t before = cuda_emulator::device_to_host_copies();
  const Tensor on_gpu = x.to(Device::cuda(0));  // host → device
  const Tensor doubled = ops::add(on_gpu, on_gpu).clone();  // kernels and a device → device copy
  CHECK(cuda_emulator::device_to_host_copies() == before);
  CHECK(doubled.to(Device::cpu()).at({3, 2}) == 3.0);  // device → host
  CHECK(cuda_emulator::device_to_host_copies() == before + 1);
}

// (The fused attention is left out: with a mask it reads back whether a row has no visible
// key, autograd/fused/scaled_dot_product.cpp fully_masked_rows.)
TEST_CASE("linear layers, softmax, layer norm and dropout on cuda read nothing back to the host",
          "[cuda_emulated]") {
  REQUIRE(cuda::register_cuda_backend());
  const Device gpu = Device::cuda(0);
  const Tensor x = full({2, 5, 8}, 0.5, DType::Float32, gpu), w = full({8, 8}, 0.1, DType::Float32, gpu);
  const Tensor gamma = ones({8}, DType::Float32, gpu), beta = zeros({8}, DType::Float32, gpu);
  Generator gen(3);
  const uint64_t before = cuda_emulator::device_to_host_copies();
  const Tensor scores = softmax(matmul(linear(x, w, Tensor()), transpose(x, 1, 2)), -1);
  const Tensor mixed = matmul(dropout(scores, 0.1, true, &gen), x);
  const Tensor out = layer_norm(dropout_add(linear_relu(mixed, w, Tensor()), x, 0.1, true, &gen), gamma, beta);
  CHECK(cuda_emulator::device_to_host_copies() == before);
  CHECK(out.to(Device::cpu()).numel() == 80);
  CHECK(cuda_emulator::device_to_host_copies() == before + 1);
}

// Runs `touch` in a child process; returns what it wrote to stderr and sets `signal` to the
// signal that ended it (0 when it exited).
template <typename Touch>
std::string in_child(Touch touch, int& signal) {
  int pipe_ends[2];
  REQUIRE(pipe(pipe_ends) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(pipe_ends[1], STDERR_FILENO);
    dup2(open("/dev/null", O_WRONLY), STDOUT_FILENO);  // the test framework's own report of the crash
    touch();
    _exit(0);
  }
  close(pipe_ends[1]);
  std::string text;
  char chunk[4096];
  for (ssize_t n; (n = read(pipe_ends[0], chunk, sizeof(chunk))) > 0;) text.append(chunk, size_t(n));
  close(pipe_ends[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return text;
}

TEST_CASE("host code cannot touch device memory outside CUDA calls, and is told so", "[cuda_emulated]") {
  const DeviceBuffer buffer(varied(64, 0));
  CHECK(buffer.read(64) == varied(64, 0));  // copies reach it (and kernels: the other tests)
  int signal = 0;
  const std::string reading = in_child([&] { std::printf("%f", double(*static_cast<volatile float*>(buffer.data + 3))); }, signal);
  CHECK(signal == SIGSEGV);
  CHECK_THAT(reading, Catch::Contains("host code touched device memory") &&
                          Catch::Contains("12 bytes into the allocation") && Catch::Contains("of 256 bytes"));
  const std::string writing = in_child([&] { *static_cast<volatile float*>(buffer.data) = 1.0f; }, signal);
  CHECK(signal == SIGSEGV);
  CHECK_THAT(writing, Catch::Contains("host code touched device memory"));
  CHECK(in_child([] {}, signal).empty());
  CHECK(signal == 0);
}

TEST_CASE("the emulated runtime refuses what a GPU refuses, with CUDA's errors", "[cuda_emulated]") {
  CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaSuccess);  // reading the error resets it
  CHECK(std::strcmp(cudaGetErrorName(cudaErrorInvalidDevice), "cudaErrorInvalidDevice") == 0);
  int host_value = 0;
  CHECK(cudaFree(&host_value) == cudaErrorInvalidValue);  // not a device allocation
  const DeviceBuffer buffer(varied(8, 0));
  std::vector<float> host(16);
  CHECK(cudaMemcpyAsync(host.data(), buffer.data, 16 * sizeof(float), cudaMemcpyDefault, nullptr) ==
        cudaErrorInvalidValue);  // runs past the end of the allocation
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
  CHECK(cudaStreamSynchronize(stream) == cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST_CASE("the emulated cuBLAS computes column-major strided batched products as cuBLAS does", "[cuda_emulated]") {
  cublasHandle_t handle = nullptr;
  REQUIRE(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS);
  const int m = 5, n = 4, k = 3, batches = 2;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const bool fast_bf16 : {false, true}) {
        INFO("transa " << ta << ", transb " << tb << ", bf16 " << fast_bf16);
        // Leading dimensions wider than the stored matrices; B is one matrix for every batch.
        const int lda = (ta ? k : m) + 2, ldb = (tb ? n : k) + 1, ldc = m + 3;
        const long long stride_a = (long long)lda * (ta ? m : k), stride_c = (long long)ldc * n;
        const std::vector<float> a = varied(size_t(stride_a) * batches, 0.1), b = varied(size_t(ldb) * (tb ? k : n), 0.7);
        const std::vector<float> c = varied(size_t(stride_c) * batches, 1.9);
        const DeviceBuffer da(a), db(b), dc(c);
        const float alpha = 0.5f, beta = -2.0f;
        REQUIRE(cublasGemmStridedBatchedEx(handle, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n,
                                           k, &alpha, da.data, CUDA_R_32F, lda, stride_a, db.data, CUDA_R_32F, ldb, 0,
                                           &beta, dc.data, CUDA_R_32F, ldc, stride_c, batches,
                                           fast_bf16 ? CUBLAS_COMPUTE_32F_FAST_16BF : CUBLAS_COMPUTE_32F,
                                           CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
        const std::vector<float> got = dc.read(c.size());
        const auto operand = [&](float v) { return fast_bf16 ? double(bfloat16_to_float(float_to_bfloat16(v))) : v; };
        for (int i = 0; i < batches; ++i)
          for (int r = 0; r < ldc; ++r)
            for (int col = 0; col < n; ++col) {
              const size_t at = size_t(i * stride_c) + size_t(col) * ldc + size_t(r);
              double expected = c[at];  // rows past m are padding: untouched
              if (r < m) {
                double sum = 0;
                for (int j = 0; j < k; ++j) {
                  const double av = element(a, size_t(i * stride_a), lda, ta, r, j);
                  const double bv = element(b, 0, ldb, tb, j, col);
                  sum += operand(float(av)) * operand(float(bv));
                }
                expected = alpha * sum + beta * c[at];
              }
              CHECK(got[at] == Approx(expected).margin(1e-5));
            }
      }
  const DeviceBuffer d(varied(64, 0));
  const float one = 1.0f;
  CHECK(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d.data, CUDA_R_32F, 3, 0, d.data,
                                   CUDA_R_32F, 4, 0, &one, d.data, CUDA_R_32F, 4, 0, 1, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);  // lda < m
  std::vector<float> host(16);
  CHECK(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, host.data(), CUDA_R_32F, 4, 0,
                                   d.data, CUDA_R_32F, 4, 0, &one, d.data, CUDA_R_32F, 4, 0, 1, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);  // a host pointer
  CHECK(cublasDestroy(handle) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasDestroy(handle) == CUBLAS_STATUS_NOT_INITIALIZED);
}
