# Finds the libraries attnlab builds on. Every one is a Debian package that scripts/setup.sh
# installs; what each is for is listed in README.md ("Dependencies").
#
# A missing required library does not end configuration at the first failure with CMake's
# own report: each is looked for QUIETly, the Debian packages of all the missing ones are
# collected in ATTNLAB_MISSING_PACKAGES, and the top-level CMakeLists.txt stops with one line
# that names them all. (The optional CUDA backend is decided in cmake/cuda.cmake.)

set(ATTNLAB_MISSING_PACKAGES "")

# attnlab_require(<found-variable> <debian-package>): records the package when not found.
macro(attnlab_require found package)
  if(NOT ${found})
    list(APPEND ATTNLAB_MISSING_PACKAGES ${package})
  endif()
endmacro()

find_package(OpenMP QUIET)
attnlab_require(OpenMP_CXX_FOUND "libgomp1 (g++)")
find_package(Eigen3 3.4 QUIET NO_MODULE)
attnlab_require(Eigen3_FOUND libeigen3-dev)
find_package(fmt QUIET)
attnlab_require(fmt_FOUND libfmt-dev)
find_package(nlohmann_json QUIET)
attnlab_require(nlohmann_json_FOUND nlohmann-json3-dev)
find_package(CLI11 QUIET)
attnlab_require(CLI11_FOUND libcli11-dev)
find_package(ICU QUIET COMPONENTS uc i18n data)
attnlab_require(ICU_FOUND libicu-dev)
find_package(Threads REQUIRED)
# Boost.Context: the stack switches of the CUDA emulator's fibers (cuda/emulator/emulator.cpp).
find_package(Boost 1.74 QUIET CONFIG COMPONENTS context)
attnlab_require(Boost_FOUND libboost-context-dev)
# cairo: the figures of `inspect`, `plot` and the demo's report (drawing, text, PNG encoding).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(CAIRO QUIET IMPORTED_TARGET cairo)
  # libzip: the zip archives `torch.save` writes, read by `import-fairseq` (apps/interop/).
  pkg_check_modules(LIBZIP QUIET IMPORTED_TARGET libzip)
endif()
attnlab_require(CAIRO_FOUND libcairo2-dev)
attnlab_require(LIBZIP_FOUND libzip-dev)
# Open MPI: the processes of data-parallel training and their collectives (dist/).
find_package(MPI QUIET COMPONENTS C)
attnlab_require(MPI_C_FOUND "libopenmpi-dev openmpi-bin")
# gloo: the collectives of ranks that meet through --distributed-init-method (dist/).
find_package(Gloo CONFIG QUIET)
attnlab_require(Gloo_FOUND libgloo-dev)

# OpenBLAS, OpenMP flavour: it shares our OpenMP thread pool (two pools that spin-wait
# against each other halve the throughput on 2 cores; scripts/setup.sh).
find_path(OPENBLAS_INCLUDE_DIR cblas.h PATHS /usr/include/x86_64-linux-gnu/openblas-openmp
          /usr/include/aarch64-linux-gnu/openblas-openmp /usr/include/openblas NO_DEFAULT_PATH)
find_library(OPENBLAS_LIBRARY NAMES openblas PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp
             /usr/lib/aarch64-linux-gnu/openblas-openmp NO_DEFAULT_PATH)
if(NOT OPENBLAS_INCLUDE_DIR OR NOT OPENBLAS_LIBRARY)
  list(APPEND ATTNLAB_MISSING_PACKAGES libopenblas-openmp-dev)
endif()

# oneDNN (libdnnl-dev, OpenMP runtime): the large float32 and bfloat16 GEMMs
# (core/cpu/onednn_gemm.hpp). Located by its header and library rather than by its CMake
# package, whose config also demands the OpenCL development files (a Recommends of
# libdnnl-dev that an install without recommends lacks).
find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(DNNL_LIBRARY NAMES dnnl)
if(DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
  add_library(attnlab_onednn INTERFACE)
  target_include_directories(attnlab_onednn INTERFACE ${DNNL_INCLUDE_DIR})
  target_link_libraries(attnlab_onednn INTERFACE ${DNNL_LIBRARY})
else()
  list(APPEND ATTNLAB_MISSING_PACKAGES libdnnl-dev)
endif()

if(ATTNLAB_BUILD_TESTS)
  find_path(CATCH2_INCLUDE_DIR catch.hpp PATHS /usr/include/catch2 NO_DEFAULT_PATH)
  attnlab_require(CATCH2_INCLUDE_DIR "catch2 (or configure with -DATTNLAB_BUILD_TESTS=OFF)")
endif()
if(ATTNLAB_BUILD_BENCH)
  find_package(benchmark QUIET)
  attnlab_require(benchmark_FOUND "libbenchmark-dev (or configure with -DATTNLAB_BUILD_BENCH=OFF)")
endif()
