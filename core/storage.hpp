// A block of device memory shared by a tensor and all its views; returns itself to the
// device's caching allocator when the last handle goes away.
#pragma once
#include <cstddef>
#include <memory>

#include "core/allocator.hpp"

namespace attn {

class Storage {
 public:
  Storage(size_t nbytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // Exchanges the blocks of two storages (bytes, size and device), so that every tensor
  // sharing this storage sees the other's memory; relocate() in tensor.hpp uses it to move
  // a storage to another device in place.
  void swap(Storage& other) noexcept;

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
};

}  // namespace attn
