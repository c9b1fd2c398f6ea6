// Bucketed gradient all-reduce. See gradient_buckets.hpp.
#include "apps/training/gradient_buckets.hpp"

#include <limits>

#include "core/backend.hpp"
#include "core/error.hpp"

namespace attn::app {

void GradientSyncOptions::validate() const {
  ATTN_CHECK(ddp_backend == "c10d" || ddp_backend == "pytorch_ddp" || ddp_backend == "no_c10d" ||
                 ddp_backend == "legacy_ddp",
             "train: --ddp-backend {}: not supported; use c10d (buckets all-reduced during the backward pass) or "
             "no_c10d (one buffer after it)",
             ddp_backend);
  ATTN_CHECK(bucket_cap_mb > 0, "train: --bucket-cap-mb must be > 0, got {}", bucket_cap_mb);
}

bool GradientSyncOptions::overlaps() const { return ddp_backend == "c10d" || ddp_backend == "pytorch_ddp"; }

size_t GradientSyncOptions::bucket_cap_bytes() const {
  if (!overlaps()) return std::numeric_limits<size_t>::max();
  return size_t(bucket_cap_mb * 1024.0 * 1024.0);
}

std::vector<std::vector<size_t>> assign_buckets(const std::vector<size_t>& parameter_bytes, size_t cap_bytes) {
  std::vector<std::vector<size_t>> buckets;
  size_t bytes_in_last = 0;
  for (size_t i = parameter_bytes.size(); i-- > 0;) {
    const size_t bytes = parameter_bytes[i];
    const bool fits = !buckets.empty() && bytes <= cap_bytes && bytes_in_last <= cap_bytes - bytes;
    if (!fits) {
      buckets.emplace_back();
      bytes_in_last = 0;
    }
    buckets.back().push_back(i);
    bytes_in_last += bytes;
  }
  return buckets;
}

GradientBuckets::GradientBuckets(dist::Communicator& world, const std::vector<Tensor>& parameters, size_t cap_bytes)
    : world_(world), parameters_(parameters), device_(parameters.empty() ? Device::cpu() : parameters[0].device()) {
  std::vector<size_t> bytes;
  for (const Tensor& p : parameters_) {
    ATTN_CHECK(p.dtype() == DType::Float32 && p.device() == device_,
               "data-parallel training: parameter {} is {} on {}; the gradient all-reduce takes float32 parameters "
               "on one device ({})",
               p.shape().str(), std::string(dtype_name(p.dtype())), p.device().str(), device_.str());
    bytes.push_back(p.nbytes());
  }
  ATTN_CHECK(device_.is_cpu() != world_.sums_device_memory(),
             "data-parallel training: the parameters are on {}, but the {} communicator sums {} memory", device_.str(),
             world_.name(), world_.sums_device_memory() ? "GPU" : "host");
  offset_.resize(parameters_.size());
  for (std::vector<size_t>& members : assign_buckets(bytes, cap_bytes)) {
    Bucket& bucket = buckets_.emplace_back();
    for (size_t index : members) {
      offset_[index] = bucket.numel;
      bucket.numel += parameters_[index].numel();
      bucket_of_[parameters_[index].autograd_meta().get()] = buckets_.size() - 1;
    }
    bucket.members = std::move(members);
  }
}

bool GradientBuckets::serves(const std::vector<Tensor>& parameters) const {
  if (parameters.size() != parameters_.size()) return false;
  for (size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].autograd_meta() != parameters_[i].autograd_meta() || parameters[i].shape() != parameters_[i].shape())
      return false;
  return true;
}

void GradientBuckets::on_grad_ready(const AutogradMeta& leaf) {
  const auto found = bucket_of_.find(&leaf);
  if (found == bucket_of_.end()) return;
  if (++buckets_[found->second].ready == buckets_[found->second].members.size()) start_ready_buckets();
  // Open MPI moves a non-blocking collective on only inside MPI calls (it has no progress
  // thread by default): without a call here, a started bucket would mostly sit until
  // finish() waits for it, and the backward pass would overlap nothing. Testing the oldest
  // unfinished bucket, once per final gradient, is such a call, and cheap.
  for (size_t i = 0; i < next_to_start_; ++i)
    if (!buckets_[i].pending->test()) break;
}

void GradientBuckets::start_ready_buckets() {
  while (next_to_start_ < buckets_.size() && buckets_[next_to_start_].ready == buckets_[next_to_start_].members.size())
    start(buckets_[next_to_start_++]);
}

void GradientBuckets::start(Bucket& bucket) {
  bucket.buffer = empty({bucket.numel}, DType::Float32, device_);
  for (size_t member : bucket.members) {
    const Tensor g = grad(parameters_[member]);
    if (g.defined()) slot(bucket, member).copy_(g);
    else slot(bucket, member).zero_();
  }
  // On a GPU the copies are queued on the device's stream: the collective must follow them.
  void* producer = backend_for(device_).stream(device_).native;
  bucket.pending = world_.start_all_reduce_sum(bucket.buffer.data<float>(), size_t(bucket.numel), producer);
}

Tensor GradientBuckets::slot(const Bucket& bucket, size_t member) const {
  const Tensor& p = parameters_[member];
  return bucket.buffer.narrow(0, offset_[member], p.numel()).view(p.shape());
}

void GradientBuckets::finish() {
  while (next_to_start_ < buckets_.size()) start(buckets_[next_to_start_++]);
  for (Bucket& bucket : buckets_) {
    bucket.pending->wait();
    for (size_t member : bucket.members) set_grad(parameters_[member], slot(bucket, member));
    bucket.pending.reset();
    bucket.buffer = Tensor();  // the gradients keep it alive; the next update takes a fresh one
    bucket.ready = 0;
  }
  next_to_start_ = 0;
}

}  // namespace attn::app
