// Tensor handle, views and copies (docs/design.md §2). Views only recompute shape, strides and
// offset; data moves only in contiguous/clone/to/copy_/fill_, through the device's kernels.
#include "core/tensor.hpp"

#include <algorithm>
#include <optional>

#include "core/backend.hpp"
#include "core/deferred_checks.hpp"

namespace attn {

namespace {

void check_extents(const Shape& shape) {
  for (int64_t d : shape) ATTN_CHECK(d >= 0, "negative extent in shape {}", shape.str());
}

// Replaces a single -1 in `requested` by the extent that keeps numel; names both shapes on error.
Shape infer_shape(const Shape& requested, int64_t numel, const Shape& from) {
  Shape shape = requested;
  int infer = -1;
  int64_t known = 1;
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      ATTN_CHECK(infer < 0, "shape {} has more than one -1 (reshaping {})", requested.str(), from.str());
      infer = d;
    } else {
      ATTN_CHECK(shape[d] >= 0, "invalid extent {} in shape {}", shape[d], requested.str());
      known *= shape[d];
    }
  }
  if (infer >= 0) {
    ATTN_CHECK(known != 0 && numel % known == 0, "cannot reshape tensor of shape {} ({} elements) into {}",
               from.str(), numel, requested.str());
    shape[infer] = numel / known;
  }
  ATTN_CHECK(shape.numel() == numel, "cannot reshape tensor of shape {} ({} elements) into {} ({} elements)",
             from.str(), numel, requested.str(), shape.numel());
  return shape;
}

// Strides that view (shape, strides) as new_shape without moving data, if any exist:
// walk both shapes from the innermost dim, matching runs of dims that are contiguous
// with each other in the old layout ("chunks") against equal-numel runs of new dims.
std::optional<Shape> view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape) {
  if (shape.numel() == 0 || shape.empty()) return contiguous_strides(new_shape);
  Shape new_strides = Shape::filled(new_shape.size(), 0);
  int view_d = new_shape.size() - 1;
  int64_t chunk_stride = strides.back(), chunk_numel = 1, view_numel = 1;
  for (int d = shape.size() - 1; d >= 0; --d) {
    chunk_numel *= shape[d];
    bool chunk_ends = d == 0 || (shape[d - 1] != 1 && strides[d - 1] != chunk_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < chunk_numel || new_shape[view_d] == 1)) {
      new_strides[view_d] = view_numel * chunk_stride;
      view_numel *= new_shape[view_d];
      --view_d;
    }
    if (view_numel != chunk_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = strides[d - 1];
      chunk_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

// Copy between tensors of one shape; a CUDA backend also handles copies to/from the host. A
// copy from a device to the host is where the host waits for the device anyway: the deferred
// checks of device data run first, so no value read back comes from bad input.
void copy_between(const Tensor& src, const Tensor& dst) {
  if (!src.device().is_cpu() && dst.device().is_cpu()) run_deferred_checks();
  Device device = src.device().is_cuda() ? src.device() : dst.device();
  backend_for(device).copy(src, dst);
}

void append_values(std::string& out, const std::vector<double>& values, const Shape& shape, int dim, size_t& next) {
  if (dim == shape.size()) {
    out += fmt::format("{}", values[next++]);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) out += ", ";
    append_values(out, values, shape, dim + 1, next);
  }
  out += ']';
}

}  // namespace

Tensor::Tensor(const Shape& shape, DType dtype, Device device)
    : shape_(shape), strides_(contiguous_strides(shape)), dtype_(dtype) {
  check_extents(shape);
  storage_ = std::make_shared<Storage>(size_t(shape.numel()) * dtype_size(dtype), device);
}

Tensor::Tensor(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)), shape_(shape), strides_(strides), offset_(offset), dtype_(dtype) {
  check_extents(shape);
  ATTN_CHECK(shape.size() == strides.size(), "shape {} and strides {} differ in length", shape.str(), strides.str());
}

int64_t Tensor::size(int64_t dim) const {
  ATTN_CHECK(this->dim() > 0, "size({}) of a 0-d tensor", dim);
  return shape_[wrap_dim(dim, this->dim())];
}

int64_t Tensor::stride(int64_t dim) const {
  ATTN_CHECK(this->dim() > 0, "stride({}) of a 0-d tensor", dim);
  return strides_[wrap_dim(dim, this->dim())];
}

Device Tensor::device() const {
  ATTN_CHECK(defined(), "device() of an undefined tensor");
  return storage_->device();
}

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int d = this->dim() - 1; d >= 0; --d) {
    if (shape_[d] == 1) continue;
    if (strides_[d] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

void* Tensor::raw_data() const {
  ATTN_CHECK(defined(), "data of an undefined tensor");
  return static_cast<char*>(storage_->data()) + offset_ * int64_t(dtype_size(dtype_));
}

namespace {

// Element offset (in elements, from the view's first element) of a multi-index, range-checked.
int64_t element_offset(const Tensor& t, std::initializer_list<int64_t> index) {
  ATTN_CHECK(int(index.size()) == t.dim(), "index of {} values for a tensor of shape {}", index.size(), t.shape().str());
  int64_t off = 0;
  int d = 0;
  for (int64_t i : index) {
    ATTN_CHECK(i >= 0 && i < t.shape()[d], "index {} out of range [0, {}) in dim {} of shape {}", i, t.shape()[d], d,
               t.shape().str());
    off += i * t.strides()[d];
    ++d;
  }
  return off;
}

void check_host(const Tensor& t, const char* what) {
  ATTN_CHECK(t.defined(), "{} of an undefined tensor", what);
  ATTN_CHECK(t.device().is_cpu(), "{} needs a CPU tensor, this one is on {}", what, t.device().str());
}

}  // namespace

double Tensor::at(std::initializer_list<int64_t> index) const {
  check_host(*this, "at()");
  int64_t off = element_offset(*this, index);
  return dispatch_dtype(dtype_, [&](auto tag) { return double(static_cast<decltype(tag)*>(raw_data())[off]); });
}

void Tensor::set(std::initializer_list<int64_t> index, double value) {
  check_host(*this, "set()");
  int64_t off = element_offset(*this, index);
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    static_cast<T*>(raw_data())[off] = static_cast<T>(value);
  });
}

double Tensor::item() const {
  ATTN_CHECK(numel() == 1, "item() needs a tensor with one element, got shape {}", shape_.str());
  Tensor host = to(Device::cpu()).contiguous();
  return dispatch_dtype(dtype_, [&](auto tag) { return double(*static_cast<decltype(tag)*>(host.raw_data())); });
}

std::vector<double> Tensor::to_vector() const {
  ATTN_CHECK(defined(), "to_vector() of an undefined tensor");
  Tensor host = to(Device::cpu()).contiguous();
  std::vector<double> values(static_cast<size_t>(numel()));
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(host.raw_data());
    for (size_t i = 0; i < values.size(); ++i) values[i] = double(p[i]);
  });
  return values;
}

namespace {
GradientRecordingQuery recording_query = nullptr;

void check_not_recording(const Tensor& t, const char* method, const Shape& shape) {
  ATTN_CHECK(!recording_query || !recording_query(t),
             "Tensor::{0}({1}) on a {2} tensor that requires grad would cut it off the gradient graph: use "
             "attn::{0} (autograd/ops.hpp), or {0} data_only() to detach on purpose",
             method, shape.str(), t.shape().str());
}
}  // namespace

void set_gradient_recording_query(GradientRecordingQuery query) { recording_query = query; }

Tensor Tensor::view(const Shape& shape) const {
  check_not_recording(*this, "view", shape);
  Shape target = infer_shape(shape, numel(), shape_);
  std::optional<Shape> strides = view_strides(shape_, strides_, target);
  ATTN_CHECK(strides.has_value(), "view: cannot view tensor of shape {} with strides {} as {} without a copy (use reshape)",
             shape_.str(), strides_.str(), target.str());
  return Tensor(storage_, target, *strides, offset_, dtype_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  check_not_recording(*this, "reshape", shape);
  Shape target = infer_shape(shape, numel(), shape_);
  if (std::optional<Shape> strides = view_strides(shape_, strides_, target))
    return Tensor(storage_, target, *strides, offset_, dtype_);
  return contiguous().view(target);
}

Tensor Tensor::permute(const std::vector<int>& dims) const {
  ATTN_CHECK(int(dims.size()) == this->dim(), "permute: {} dims given for a tensor of shape {}", dims.size(), shape_.str());
  Shape shape, strides;
  std::vector<bool> seen(dims.size(), false);
  for (int d : dims) {
    int w = wrap_dim(d, this->dim());
    ATTN_CHECK(!seen[w], "permute: dim {} repeated (tensor of shape {})", d, shape_.str());
    seen[w] = true;
    shape.push_back(shape_[w]);
    strides.push_back(strides_[w]);
  }
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  int a = wrap_dim(d0, this->dim()), b = wrap_dim(d1, this->dim());
  Shape shape = shape_, strides = strides_;
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  int d = wrap_dim(dim, this->dim());
  ATTN_CHECK(start >= 0 && length >= 0 && start + length <= shape_[d],
             "narrow: range [{}, {}) out of bounds for dim {} of extent {} (shape {})", start, start + length, d, shape_[d],
             shape_.str());
  Shape shape = shape_;
  shape[d] = length;
  return Tensor(storage_, shape, strides_, offset_ + start * strides_[d], dtype_);
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  int d = wrap_dim(dim, this->dim());
  ATTN_CHECK(step > 0, "slice: step must be positive, got {}", step);
  const int64_t n = shape_[d];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape shape = shape_, strides = strides_;
  shape[d] = (end - start + step - 1) / step;
  strides[d] *= step;
  return Tensor(storage_, shape, strides, offset_ + start * strides_[d], dtype_);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  int d = wrap_dim(dim, this->dim());
  const int64_t n = shape_[d];
  ATTN_CHECK(index >= -n && index < n, "select: index {} out of range for dim {} of extent {} (shape {})", index, d, n,
             shape_.str());
  if (index < 0) index += n;
  Shape shape = shape_, strides = strides_;
  shape.erase(d);
  strides.erase(d);
  return Tensor(storage_, shape, strides, offset_ + index * strides_[d], dtype_);
}

Tensor Tensor::expand(const Shape& shape) const {
  ATTN_CHECK(shape.size() >= this->dim(), "expand: cannot expand shape {} to fewer dims {}", shape_.str(), shape.str());
  const int lead = shape.size() - this->dim();
  Shape out_shape = shape, out_strides = Shape::filled(shape.size(), 0);
  for (int d = 0; d < shape.size(); ++d) {
    if (d < lead) {
      ATTN_CHECK(shape[d] >= 0, "expand: shape {} has -1 in a new leading dim (from {})", shape.str(), shape_.str());
      continue;
    }
    const int64_t have = shape_[d - lead];
    int64_t want = shape[d] == -1 ? have : shape[d];
    ATTN_CHECK(want == have || have == 1, "expand: cannot expand shape {} to {} (dim {}: {} vs {})", shape_.str(),
               shape.str(), d, have, want);
    out_shape[d] = want;
    out_strides[d] = want == have ? strides_[d - lead] : 0;
  }
  return Tensor(storage_, out_shape, out_strides, offset_, dtype_);
}

Tensor Tensor::squeeze(int64_t dim) const {
  int d = wrap_dim(dim, this->dim());
  if (shape_[d] != 1) return *this;
  Shape shape = shape_, strides = strides_;
  shape.erase(d);
  strides.erase(d);
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  int d = wrap_dim(dim, this->dim() + 1);
  Shape shape = shape_, strides = strides_;
  int64_t stride = d < this->dim() ? strides_[d] * shape_[d] : 1;
  shape.insert(d, 1);
  strides.insert(d, stride);
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (this->dim() == 0) return reshape({1});
  int s = wrap_dim(start_dim, this->dim()), e = wrap_dim(end_dim, this->dim());
  ATTN_CHECK(s <= e, "flatten: start dim {} after end dim {} (shape {})", s, e, shape_.str());
  Shape shape;
  for (int d = 0; d < s; ++d) shape.push_back(shape_[d]);
  int64_t merged = 1;
  for (int d = s; d <= e; ++d) merged *= shape_[d];
  shape.push_back(merged);
  for (int d = e + 1; d < this->dim(); ++d) shape.push_back(shape_[d]);
  return reshape(shape);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out(shape_, dtype_, device());
  copy_between(*this, out);
  return out;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor out(shape_, dtype, device());
  copy_between(*this, out);
  return out;
}

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  Tensor out(shape_, dtype_, device);
  copy_between(*this, out);
  return out;
}

void relocate(const Tensor& t, Device device) {
  ATTN_CHECK(t.defined(), "relocate: undefined tensor");
  Storage& storage = *t.storage();
  if (storage.device() == device) return;
  // The bytes move as integers of the widest size that divides them: copies of integers are
  // exact whatever the bytes mean (booleans would be normalised to 0/1).
  const size_t n = storage.nbytes();
  const DType word = n % 8 == 0 ? DType::Int64 : n % 4 == 0 ? DType::Int32 : DType::Bool;
  const int64_t words = int64_t(n / dtype_size(word));
  auto moved = std::make_shared<Storage>(n, device);
  const Shape shape{words}, strides{1};
  copy_between(Tensor(t.storage(), shape, strides, 0, word), Tensor(moved, shape, strides, 0, word));
  storage.swap(*moved);  // `moved` now holds the old block and frees it on the old device
}

void Tensor::copy_(const Tensor& src) {
  ATTN_CHECK(defined() && src.defined(), "copy_: undefined tensor");
  Shape common = broadcast_shapes(src.shape(), shape_);
  ATTN_CHECK(common == shape_, "copy_: source of shape {} cannot be broadcast to destination shape {}", src.shape().str(),
             shape_.str());
  // A source overlapping the destination is read completely before anything is written.
  Tensor source = shares_storage(src) ? src.clone() : src;
  copy_between(source.expand(shape_), *this);
}

void Tensor::fill_(double value) {
  ATTN_CHECK(defined(), "fill_ of an undefined tensor");
  backend_for(device()).fill(*this, value);
}

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::string out = fmt::format("Tensor({}{}{})", dtype_name(dtype_), shape_.str(),
                                device().is_cpu() ? "" : ", " + device().str());
  constexpr int64_t kMaxPrinted = 64;
  if (numel() <= kMaxPrinted) {
    out += ' ';
    size_t next = 0;
    append_values(out, to_vector(), shape_, 0, next);
  }
  return out;
}

Tensor Tensor::data_only() const {
  Tensor t = *this;
  t.autograd_.reset();
  return t;
}

}  // namespace attn
