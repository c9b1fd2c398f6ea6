// The gradient all-reduce of data-parallel training (data_parallel.hpp), in buckets started
// while the backward pass still runs, as PyTorch's DistributedDataParallel does for fairseq's
// --ddp-backend c10d; or, with --ddp-backend no_c10d (fairseq's legacy DDP), in one flat
// buffer after the backward pass.
//
// * Buckets: the parameters in reverse registration order, consecutive ones sharing a bucket
//   while it stays within --bucket-cap-mb MiB (a parameter larger than that has a bucket of
//   its own). A model registers its parameters in the order its forward uses them
//   (embeddings, encoder, decoder, output projection), and backward makes gradients final
//   roughly in the reverse of that order, so the first bucket is final first. The order of
//   the first backward pass would fit more closely (PyTorch's DDP rebuilds its buckets from
//   it), but it is only known after an update without overlap, and the ranks would have to
//   agree on it; reverse registration order is the same on every rank by construction.
// * Overlap: backward's GradReadyFn (autograd/autograd.hpp) tells on_grad_ready() when a
//   parameter's gradient is final. When every parameter of a bucket is, and every bucket
//   before it has started, its gradients are copied into the bucket's flat buffer and its
//   all-reduce is started without waiting (Communicator::start_all_reduce_sum). Buckets start
//   strictly in order, the same on every rank, as collectives must; a bucket that is final
//   early waits for those before it. finish() starts the buckets not started yet (those of
//   parameters no gradient reached in the last backward; all of them for a rank without a
//   batch, or with the flat buffer), waits for all, and makes each parameter's gradient the
//   sum over the ranks: a view of its bucket's buffer. A missing gradient counts as zeros.
// * Buffers are tensors on the gradients' device, so a model on a GPU with the NCCL
//   communicator needs nothing more; the MPI communicator sums host memory only.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/autograd.hpp"
#include "core/tensor.hpp"
#include "dist/communicator.hpp"

namespace attn::app {

// fairseq's flags of the gradient all-reduce.
struct GradientSyncOptions {
  std::string ddp_backend = "c10d";  // c10d (alias pytorch_ddp): buckets | no_c10d (alias legacy_ddp): one buffer
  double bucket_cap_mb = 25.0;       // MiB per bucket (c10d)

  // Throws attn::Error naming the flag when a value is not one of these.
  void validate() const;
  // Whether the buckets are started during the backward pass (c10d).
  bool overlaps() const;
  // The bucket capacity in bytes: --bucket-cap-mb, or unlimited (one buffer) for no_c10d.
  size_t bucket_cap_bytes() const;
};

// Buckets of parameter indices for parameters of `parameter_bytes` (in registration order):
// taken in reverse order, consecutive ones together while a bucket holds at most `cap_bytes`;
// one larger than the cap alone.
std::vector<std::vector<size_t>> assign_buckets(const std::vector<size_t>& parameter_bytes, size_t cap_bytes);

class GradientBuckets {
 public:
  // `parameters`: float32 tensors on one device, the MPI communicator wanting the CPU and
  // NCCL a GPU (attn::Error otherwise). `world` must outlive this object.
  GradientBuckets(dist::Communicator& world, const std::vector<Tensor>& parameters, size_t cap_bytes);

  // Whether it was made for these parameters (the same tensors, in the same order).
  bool serves(const std::vector<Tensor>& parameters) const;
  size_t num_buckets() const { return buckets_.size(); }
  // Backward's GradReadyFn: `leaf`'s gradient is final (leaves other than the parameters are
  // ignored). Starts every bucket whose turn has come.
  void on_grad_ready(const AutogradMeta& leaf);
  // Starts what is left, waits for every bucket and sets every parameter's gradient to its
  // sum over the ranks. Ready for the next update afterwards.
  void finish();

 private:
  struct Bucket {
    std::vector<size_t> members;  // indices into parameters_, in buffer order
    int64_t numel = 0;
    size_t ready = 0;  // members whose gradient is final in this update
    Tensor buffer;     // this update's flat gradients, from start() on
    std::unique_ptr<dist::PendingCollective> pending;
  };

  // Starts the buckets, in order, from the next one not started up to the first not ready.
  void start_ready_buckets();
  // Copies its members' gradients into a fresh flat buffer and starts its all-reduce.
  void start(Bucket& bucket);
  // `member`'s place in `bucket`'s buffer, in the parameter's shape.
  Tensor slot(const Bucket& bucket, size_t member) const;

  dist::Communicator& world_;
  std::vector<Tensor> parameters_;
  Device device_;
  std::vector<Bucket> buckets_;
  std::unordered_map<const AutogradMeta*, size_t> bucket_of_;  // parameter's metadata → bucket
  std::vector<int64_t> offset_;  // parameter index → its offset in its bucket's buffer
  size_t next_to_start_ = 0;
};

}  // namespace attn::app
