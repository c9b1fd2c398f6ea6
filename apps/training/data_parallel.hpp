// Data-parallel training (`attnlab train` under `mpirun -np N`): how the ranks of a world
// (dist/communicator.hpp) share each update, so that N ranks with --update-freq U train
// exactly as one process with --update-freq N·U.
//
// * Batches: every rank runs the same loader (same data, seed and position), which yields
//   the N·U batches of one update, the batches one process with --update-freq N·U would take;
//   slot s of them (in the loader's order) is rank s mod N's, as fairseq shards an epoch's
//   batches. A rank may have fewer micro-batches than another, or none, at the end of an
//   epoch; it still joins the all-reduce (with zeros).
// * Dropout: micro-batch slot s of an update draws from the generator at counter
//   (offset at the update's start + s·kMicroBatchCounters), whichever rank runs it, and
//   after the update the offset moves on by N·U·kMicroBatchCounters on every rank: the
//   masks are those of the single-process run (Trainer::train_step).
// * Gradients: the parameters' gradients are summed over the ranks in float32
//   (gradient_buckets.hpp: with --ddp-backend c10d, the default, in buckets of
//   --bucket-cap-mb started during the update's last backward pass, earlier micro-batches
//   only accumulating as fairseq's no_sync does; with no_c10d in one flat buffer after it),
//   and the loss, nll, target-token and sentence counts in float64 after it; the trainer then
//   divides by the global target-token count, as fairseq normalises by the sample size of
//   the whole update (docs/models.md §1.9), and every rank clips and steps on the same
//   gradients. Two ranks' sums are the same whichever way they are grouped (a + b = b + a),
//   so buckets and one buffer give bit-identical parameters there.
// * Validation: each rank scores its share of the validation batches (batch b is rank
//   b mod N's) and the sums are all-reduced (evaluation.hpp), as fairseq shards validation.
// * Checkpoints, train_log.jsonl and progress lines come from rank 0 alone (is_writer()).
//   Rank 0 takes the save dir lock, cleans up and resumes first (it may finish an
//   interrupted save); then the others resume from the same save dir, which must therefore
//   be shared (one machine, or a shared file system). check_same_state then compares every
//   rank's state with rank 0's (update count, data position, generator, a checksum of the
//   weights): a rank that resumed from another checkpoint stops the job with an error.
// * Stopping: rank 0's decision is every rank's (--max-time-minutes reads each rank's clock).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/training/gradient_buckets.hpp"
#include "autograd/autograd.hpp"
#include "core/tensor.hpp"
#include "dist/communicator.hpp"

namespace attn::app {

class DataParallel {
 public:
  // Generator counters reserved for the dropout of one micro-batch (2^36: far more than a
  // micro-batch of the largest presets draws, and room for 2^28 micro-batches per run).
  static constexpr uint64_t kMicroBatchCounters = uint64_t(1) << 36;

  // Throws attn::Error when `sync` holds a value fairseq's flags do not allow. `gradients`,
  // when given, sums the gradients instead of `world` (NCCL over the ranks' GPUs, while the
  // host-memory `world` carries the control messages and counts); it has world's ranks.
  explicit DataParallel(std::shared_ptr<dist::Communicator> world, GradientSyncOptions sync = {},
                        std::shared_ptr<dist::Communicator> gradients = nullptr);

  int rank() const { return world_->rank(); }
  int size() const { return world_->size(); }
  dist::Communicator& world() { return *world_; }
  // Whether this rank writes checkpoints, the train log and progress lines (rank 0).
  bool is_writer() const { return rank() == 0; }
  // Whether slot `slot` of an update's batches (0 .. size()·update_freq - 1) is this rank's.
  bool owns(int64_t slot) const { return slot % size() == rank(); }

  // What to pass to backward() for the last micro-batch of an update: with --ddp-backend
  // c10d it starts the all-reduce of each bucket of `parameters` whose gradients are all
  // final. Empty alone and with no_c10d.
  GradReadyFn gradient_ready_hook(const std::vector<Tensor>& parameters);
  // After the update's backward passes: sums the gradients of `parameters` (float32, on one
  // device; a missing gradient counts as zeros, and every parameter has one afterwards),
  // finishing what gradient_ready_hook's callback started, and `counts` over the ranks.
  // Nothing to do alone.
  void sum_over_ranks(const std::vector<Tensor>& parameters, std::vector<double>& counts);
  // Rank 0's `stop` on every rank.
  std::optional<std::string> agree(const std::optional<std::string>& stop);
  // Throws attn::Error on every rank unless every rank's state (what `state` returns, asked
  // only when there are several ranks) equals rank 0's; `origin` (where this rank's state came
  // from) goes into the message.
  void check_same_state(const std::function<std::string()>& state, const std::string& origin);
  // Rank 0 runs `work`, then (after a barrier) the other ranks do.
  template <typename Work>
  void rank_zero_first(Work work) {
    if (is_writer()) work();
    world_->barrier();
    if (!is_writer()) work();
  }

 private:
  // The buckets of `parameters`, made at the first update (again if the parameters change).
  GradientBuckets& buckets_of(const std::vector<Tensor>& parameters);

  std::shared_ptr<dist::Communicator> world_;
  std::shared_ptr<dist::Communicator> gradients_;  // world_ unless the gradients travel apart
  GradientSyncOptions sync_;
  std::unique_ptr<GradientBuckets> buckets_;
};

// A checksum of the values of `tensors` (their bytes, in order, read on the host wherever the
// tensors are), for check_same_state.
uint64_t values_checksum(const std::vector<Tensor>& tensors);

}  // namespace attn::app
