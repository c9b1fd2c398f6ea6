// Storage: one allocator block shared by a tensor and its views (docs/design.md §2).
#include "core/storage.hpp"

#include <utility>

namespace attn {

Storage::Storage(size_t nbytes, Device device)
    : data_(allocator_for(device).allocate(nbytes)), nbytes_(nbytes), device_(device) {}

Storage::~Storage() { allocator_for(device_).deallocate(data_, nbytes_); }

void Storage::swap(Storage& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(nbytes_, other.nbytes_);
  std::swap(device_, other.device_);
}

}  // namespace attn
