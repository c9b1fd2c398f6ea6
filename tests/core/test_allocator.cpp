// The caching allocator (core/allocator.cpp) and storage (core/storage.cpp).
#include <catch.hpp>

#include <omp.h>

#include "core/allocator.hpp"
#include "core/tensor.hpp"

using namespace attn;

TEST_CASE("size classes round up by at most a quarter and stay 64-byte multiples") {
  CHECK(Allocator::round_size(0) == 64);
  CHECK(Allocator::round_size(1) == 64);
  CHECK(Allocator::round_size(65) == 128);
  CHECK(Allocator::round_size(256) == 256);
  CHECK(Allocator::round_size(257) == 320);
  CHECK(Allocator::round_size(1000) == 1024);
  CHECK(Allocator::round_size(1025) == 1280);
  for (size_t n : {300ul, 4097ul, 100000ul, 12345678ul}) {
    const size_t r = Allocator::round_size(n);
    CHECK(r >= n);
    CHECK(r % 64 == 0);
    CHECK(double(r) <= 1.25 * double(n) + 64);
    CHECK(Allocator::round_size(r) == r);
  }
}

TEST_CASE("freed blocks are reused and statistics track bytes") {
  CpuAllocator alloc;
  void* a = alloc.allocate(1000);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  void* b = alloc.allocate(5000);
  AllocatorStats s = alloc.stats();
  CHECK(s.current_bytes == 1024 + 5120);
  CHECK(s.peak_bytes == s.current_bytes);
  CHECK(s.num_allocs == 2);
  CHECK(s.num_system_allocs == 2);

  alloc.deallocate(a, 1000);
  s = alloc.stats();
  CHECK(s.current_bytes == 5120);
  CHECK(s.cached_bytes == 1024);
  CHECK(s.peak_bytes == 1024 + 5120);

  void* c = alloc.allocate(990);  // same size class
  CHECK(c == a);
  s = alloc.stats();
  CHECK(s.num_cache_hits == 1);
  CHECK(s.num_system_allocs == 2);
  CHECK(s.cached_bytes == 0);

  alloc.deallocate(b, 5000);
  alloc.deallocate(c, 990);
  alloc.reset_peak();
  CHECK(alloc.stats().peak_bytes == 0);
  alloc.release_cached();
  CHECK(alloc.stats().cached_bytes == 0);
  void* d = alloc.allocate(1000);
  CHECK(alloc.stats().num_system_allocs == 3);
  alloc.deallocate(d, 1000);
}

TEST_CASE("the allocator is safe to use from many threads") {
  CpuAllocator alloc;
#pragma omp parallel num_threads(4)
  {
    for (int i = 0; i < 2000; ++i) {
      const size_t n = size_t(64 * (1 + (i + omp_get_thread_num()) % 17));
      void* p = alloc.allocate(n);
      static_cast<char*>(p)[0] = 1;
      alloc.deallocate(p, n);
    }
  }
  AllocatorStats s = alloc.stats();
  CHECK(s.current_bytes == 0);
  CHECK(s.num_allocs == 8000);
  CHECK(s.num_cache_hits + s.num_system_allocs == 8000);
  CHECK(s.num_system_allocs <= 4 * 17);
}

TEST_CASE("tensor storage returns to the device allocator and is reused") {
  Allocator& cpu = allocator_for(Device::cpu());
  { Tensor warm({1000}, DType::Float32); }
  const AllocatorStats before = cpu.stats();
  const void* first = nullptr;
  {
    Tensor t({1000}, DType::Float32);
    first = t.raw_data();
    CHECK(cpu.stats().current_bytes == before.current_bytes + 4096);
  }
  Tensor again({1000}, DType::Float32);
  CHECK(again.raw_data() == first);
  CHECK(cpu.stats().num_system_allocs == before.num_system_allocs);
  CHECK(cpu.stats().num_cache_hits >= before.num_cache_hits + 2);
}

TEST_CASE("blocks of ever-changing sizes do not pile up in the cache") {
  // A key/value cache growing one step at a time asks for a new size class every few steps;
  // the freed smaller blocks are never reused, so a miss empties a cache that holds more than
  // was ever in use at once (here: one block, the largest so far).
  CpuAllocator alloc;
  size_t largest = 0;
  for (size_t step = 1; step <= 64; ++step) {
    size_t nbytes = step * (size_t(8) << 20);  // 8 MiB more each step, up to 512 MiB
    void* block = alloc.allocate(nbytes);
    alloc.deallocate(block, nbytes);
    largest = std::max(largest, Allocator::round_size(nbytes));
    AllocatorStats s = alloc.stats();
    CHECK(s.current_bytes == 0);
    CHECK(s.cached_bytes <= std::max(size_t(256) << 20, largest) + largest);
  }
}

TEST_CASE("a training step's allocations come from the cache from its second run on") {
  // Forward: 20 activations of 40 MiB; backward: a 12 MiB gradient each, the activations freed
  // one by one; then the gradients freed. The backward misses on its gradients while the
  // cache holds freed activations: emptying the cache there (it holds more than is in use)
  // would make every later step miss again. Nothing is written: no memory is touched.
  CpuAllocator alloc;
  const size_t activation = size_t(40) << 20, gradient = size_t(12) << 20;
  auto step = [&] {
    std::vector<void*> activations, gradients;
    for (int i = 0; i < 20; ++i) activations.push_back(alloc.allocate(activation));
    for (int i = 19; i >= 0; --i) {
      gradients.push_back(alloc.allocate(gradient));
      alloc.deallocate(activations[size_t(i)], activation);
    }
    for (void* g : gradients) alloc.deallocate(g, gradient);
  };
  step();
  const uint64_t after_first = alloc.stats().num_system_allocs;
  for (int run = 0; run < 3; ++run) step();
  CHECK(alloc.stats().num_system_allocs == after_first);
}
