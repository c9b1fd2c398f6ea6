// Data-parallel training. See data_parallel.hpp.
#include "apps/training/data_parallel.hpp"

#include "core/checksum.hpp"
#include "core/error.hpp"

namespace attn::app {

DataParallel::DataParallel(std::shared_ptr<dist::Communicator> world, GradientSyncOptions sync,
                           std::shared_ptr<dist::Communicator> gradients)
    : world_(std::move(world)), gradients_(gradients ? std::move(gradients) : world_), sync_(std::move(sync)) {
  sync_.validate();
  ATTN_CHECK(gradients_->size() == world_->size() && gradients_->rank() == world_->rank(),
             "data-parallel training: the gradients' {} communicator (rank {} of {}) differs from the world (rank {} "
             "of {})",
             gradients_->name(), gradients_->rank(), gradients_->size(), world_->rank(), world_->size());
}

GradientBuckets& DataParallel::buckets_of(const std::vector<Tensor>& parameters) {
  if (!buckets_ || !buckets_->serves(parameters))
    buckets_ = std::make_unique<GradientBuckets>(*gradients_, parameters, sync_.bucket_cap_bytes());
  return *buckets_;
}

GradReadyFn DataParallel::gradient_ready_hook(const std::vector<Tensor>& parameters) {
  if (size() == 1 || !sync_.overlaps()) return {};
  GradientBuckets& buckets = buckets_of(parameters);
  return [&buckets](const AutogradMeta& leaf) { buckets.on_grad_ready(leaf); };
}

void DataParallel::sum_over_ranks(const std::vector<Tensor>& parameters, std::vector<double>& counts) {
  if (size() == 1) return;
  buckets_of(parameters).finish();
  world_->all_reduce_sum(counts.data(), counts.size());
}

std::optional<std::string> DataParallel::agree(const std::optional<std::string>& stop) {
  if (size() == 1) return stop;
  // "" stands for no stop: a stop reason is never empty.
  const std::string decided = dist::broadcast_string(*world_, stop.value_or(""), 0);
  return decided.empty() ? std::nullopt : std::optional<std::string>(decided);
}

void DataParallel::check_same_state(const std::function<std::string()>& summary, const std::string& origin) {
  if (size() == 1) return;
  const std::string state = summary();
  const std::string rank_zero_state = dist::broadcast_string(*world_, state, 0);
  double differs = rank_zero_state == state ? 0.0 : 1.0;
  world_->all_reduce_sum(&differs, 1);
  ATTN_CHECK(differs == 0.0,
             "data-parallel training: the ranks do not start from the same state (rank 0: {}; rank {}: {}, {}). Every "
             "rank resumes from --save-dir, which must be the same directory for all of them (one machine or a shared "
             "file system)",
             rank_zero_state, rank(), state, origin);
}

uint64_t values_checksum(const std::vector<Tensor>& tensors) {
  uint64_t hash = kFnv1a64OffsetBasis;
  for (const Tensor& t : tensors) {
    const Tensor values = t.to(Device::cpu()).contiguous();
    hash = fnv1a64(hash, values.raw_data(), values.nbytes());
  }
  return hash;
}

}  // namespace attn::app
