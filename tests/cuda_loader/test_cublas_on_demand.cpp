// cuBLAS opened on first use (cuda/loader/cublas_on_demand.cpp): a program linking the CUDA
// backend starts without libcublas, and the first cuBLAS call opens it and reaches the real
// library. Needs the CUDA toolkit (built with the backend), not a GPU: querying cuBLAS's
// version and status strings works without a driver.
#include <cublas_v2.h>
#include <link.h>

#include <catch2/catch.hpp>
#include <string>

namespace {

// Whether a shared object whose path contains `name` is mapped into this process.
bool library_loaded(const std::string& name) {
  struct Search {
    const std::string& name;
    bool found = false;
  } search{name};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_name && std::string(info->dlpi_name).find(s->name) != std::string::npos) s->found = true;
        return 0;
      },
      &search);
  return search.found;
}

}  // namespace

TEST_CASE("cuBLAS is opened by its first call, not when the program starts") {
  // One test case, in this order: the first call happens here.
  REQUIRE_FALSE(library_loaded("libcublas"));

  int major = -1, minor = -1;
  REQUIRE(cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS);
  CHECK(library_loaded("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR)));
  CHECK(major == CUBLAS_VER_MAJOR);  // the library of the headers the backend was built with
  CHECK(minor >= 0);

  // The real library's words for its status codes, through the forwarding function.
  CHECK(std::string(cublasGetStatusString(CUBLAS_STATUS_SUCCESS)) == "success");
  CHECK_THAT(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE), Catch::Contains("unsupported value"));
}
