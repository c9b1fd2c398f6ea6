// Data-parallel training. See data_parallel.hpp.
#include "apps/training/data_parallel.hpp"

#include <cstring>

#include "autograd/autograd.hpp"
#include "core/checksum.hpp"
#include "core/error.hpp"

namespace attn::app {

DataParallel::DataParallel(std::shared_ptr<dist::Communicator> world) : world_(std::move(world)) {}

void DataParallel::sum_over_ranks(const std::vector<Tensor>& parameters, std::vector<double>& counts) {
  if (size() == 1) return;
  size_t total = 0;
  for (const Tensor& p : parameters) {
    ATTN_CHECK(p.dtype() == DType::Float32 && p.device().is_cpu(),
               "data-parallel training: parameter {} is {} on {}; the MPI all-reduce takes float32 on the CPU",
               p.shape().str(), std::string(dtype_name(p.dtype())), p.device().str());
    total += size_t(p.numel());
  }
  flat_.assign(total, 0.0f);
  size_t at = 0;
  for (const Tensor& p : parameters) {
    const Tensor g = grad(p);
    if (g.defined()) std::memcpy(flat_.data() + at, g.contiguous().data<float>(), size_t(p.numel()) * sizeof(float));
    at += size_t(p.numel());
  }
  world_->all_reduce_sum(flat_.data(), flat_.size());
  world_->all_reduce_sum(counts.data(), counts.size());
  at = 0;
  for (const Tensor& p : parameters) {
    Tensor summed = empty(p.shape());
    std::memcpy(summed.data<float>(), flat_.data() + at, size_t(p.numel()) * sizeof(float));
    set_grad(p, summed);
    at += size_t(p.numel());
  }
}

std::optional<std::string> DataParallel::agree(const std::optional<std::string>& stop) {
  if (size() == 1) return stop;
  // "" stands for no stop: a stop reason is never empty.
  const std::string decided = dist::broadcast_string(*world_, stop.value_or(""), 0);
  return decided.empty() ? std::nullopt : std::optional<std::string>(decided);
}

void DataParallel::check_same_state(const std::string& state, const std::string& origin) {
  if (size() == 1) return;
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
    const Tensor values = t.contiguous();
    hash = fnv1a64(hash, values.raw_data(), values.nbytes());
  }
  return hash;
}

}  // namespace attn::app
