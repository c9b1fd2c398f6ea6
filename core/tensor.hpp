// Tensor: a handle to (shared storage, shape, strides, offset, dtype). Copying a Tensor
// copies the handle, not the data. Views (reshape, permute, narrow, expand, ...) share
// storage with their base and see its writes; contiguous() copies only when needed.
// Strides and offset are in elements; shapes are row-major.
//
// Tensor also carries an opaque slot for autograd metadata. core/ never looks inside it:
// autograd/ defines AutogradMeta and the functions that use it (docs/design.md §1, §3).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/shape.hpp"
#include "core/storage.hpp"

namespace attn {

struct AutogradMeta;  // defined in autograd/

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor: defined() == false
  // A new, uninitialised, contiguous tensor.
  Tensor(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
  // A view over existing storage.
  Tensor(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides, int64_t offset, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t size(int64_t dim) const;    // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int dim() const { return shape_.size(); }
  int64_t numel() const { return shape_.numel(); }
  int64_t offset() const { return offset_; }
  DType dtype() const { return dtype_; }
  Device device() const;
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype_); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  bool shares_storage(const Tensor& other) const { return storage_ == other.storage_; }

  // Raw pointers to element 0 of this view (CPU or device memory).
  void* raw_data() const;
  template <typename T> T* data() const;  // checks dtype_of<T> == dtype()

  // --- element access (CPU, for tests and small host-side work) ---
  // Reads/writes the element at a multi-index (any dtype, converted through double).
  double at(std::initializer_list<int64_t> index) const;
  void set(std::initializer_list<int64_t> index, double value);
  double item() const;  // the single element of a 1-element tensor
  std::vector<double> to_vector() const;  // all elements in row-major order

  // --- views (share storage) ---
  // These record nothing for autograd. view and reshape, whose recorded twins in
  // autograd/ops.hpp share their names, refuse a tensor that is recording gradients (it
  // requires grad and grad mode is on): use attn::reshape / attn::view there, or call them
  // on data_only() to cut the tensor off the graph on purpose.
  Tensor view(const Shape& shape) const;     // requires compatible strides; one dim may be -1
  Tensor reshape(const Shape& shape) const;  // a view when possible, else a copy
  Tensor permute(const std::vector<int>& dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;  // removes dim
  Tensor expand(const Shape& shape) const;          // broadcast view (stride 0); -1 keeps a dim
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;

  // --- copies ---
  Tensor contiguous() const;  // *this when already contiguous
  Tensor clone() const;       // always a fresh contiguous copy
  Tensor to(DType dtype) const;    // *this when the dtype already matches
  Tensor to(Device device) const;  // *this when already there
  void copy_(const Tensor& src);   // copies (with broadcasting and dtype conversion) into this view
  void fill_(double value);
  void zero_() { fill_(0.0); }

  std::string str() const;  // shape, dtype and (small tensors) values, for messages and tests

  // --- autograd slot (opaque to core) ---
  const std::shared_ptr<AutogradMeta>& autograd_meta() const { return autograd_; }
  void set_autograd_meta(std::shared_ptr<AutogradMeta> meta) { autograd_ = std::move(meta); }
  // A handle to the same data without autograd metadata.
  Tensor data_only() const;

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::Float32;
  std::shared_ptr<AutogradMeta> autograd_;
};

template <typename T>
T* Tensor::data() const {
  ATTN_CHECK(dtype_of<T>::value == dtype_, "Tensor::data: requested {} but tensor is {}",
             dtype_name(dtype_of<T>::value), dtype_name(dtype_));
  return static_cast<T*>(raw_data());
}

// Whether a tensor is recording gradients now. core/ cannot tell (it never looks inside the
// autograd slot); autograd/ installs the answer when it is linked in. Without it: never.
using GradientRecordingQuery = bool (*)(const Tensor&);
void set_gradient_recording_query(GradientRecordingQuery query);

// --- creation (core/creation.cpp) ---
Tensor empty(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor zeros(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor ones(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor scalar_tensor(double value, DType dtype = DType::Float32, Device device = Device::cpu());  // 0-d
Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::Int64, Device device = Device::cpu());
template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, Device device = Device::cpu());
Tensor from_doubles(const std::vector<double>& values, const Shape& shape, DType dtype, Device device = Device::cpu());
// Moves t's whole storage to `device` in place: every tensor sharing it (views, other handles
// of the same parameter, a tied weight) lives there afterwards, with the same bytes. How
// Module::to moves a model without invalidating the handles an optimizer holds.
void relocate(const Tensor& t, Device device);

class Generator;
// Random tensors from the counter-based RNG; `gen` defaults to default_generator().
Tensor uniform(const Shape& shape, double low, double high, DType dtype = DType::Float32, Generator* gen = nullptr, Device device = Device::cpu());
Tensor normal(const Shape& shape, double mean, double stddev, DType dtype = DType::Float32, Generator* gen = nullptr, Device device = Device::cpu());
// 1 with probability p, else 0 (dtype = the given dtype).
Tensor bernoulli(const Shape& shape, double p, DType dtype = DType::Float32, Generator* gen = nullptr, Device device = Device::cpu());

}  // namespace attn
