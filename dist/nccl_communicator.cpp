// See nccl_communicator.hpp.
#include "dist/nccl_communicator.hpp"

#include <cstdlib>

#include <cuda_runtime.h>
#include <nccl.h>

#include "core/error.hpp"

namespace attn::dist {

struct NcclCommunicator::Handles {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

namespace {

void check_cuda(cudaError_t status, const char* call, int rank) {
  if (status != cudaSuccess)
    throw Error(fmt::format("{} failed on rank {}: {} ({})", call, rank, cudaGetErrorString(status), cudaGetErrorName(status)));
}

void check_nccl(ncclResult_t status, const char* call, int rank) {
  if (status != ncclSuccess && status != ncclInProgress)
    throw Error(fmt::format("{} failed on rank {}: {}", call, rank, ncclGetErrorString(status)));
}

}  // namespace

class NcclCommunicator::PendingEvent final : public PendingCollective {
 public:
  PendingEvent(cudaStream_t stream, int rank) : rank_(rank) {
    check_cuda(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreate", rank_);
    const cudaError_t recorded = cudaEventRecord(done_, stream);
    if (recorded != cudaSuccess) cudaEventDestroy(done_);
    check_cuda(recorded, "cudaEventRecord after ncclAllReduce", rank_);
  }
  ~PendingEvent() override { cudaEventDestroy(done_); }
  PendingEvent(const PendingEvent&) = delete;
  PendingEvent& operator=(const PendingEvent&) = delete;

  bool test() override {
    const cudaError_t status = cudaEventQuery(done_);
    if (status == cudaErrorNotReady) return false;
    check_cuda(status, "cudaEventQuery after ncclAllReduce", rank_);
    return true;
  }
  void wait() override { check_cuda(cudaEventSynchronize(done_), "cudaEventSynchronize after ncclAllReduce", rank_); }

 private:
  cudaEvent_t done_ = nullptr;
  int rank_;
};

NcclCommunicator::NcclCommunicator(Communicator& bootstrap, int device)
    : bootstrap_(bootstrap), device_(device), handles_(new Handles) {
  try {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
    ATTN_CHECK(device >= 0 && device < devices, "NCCL communicator: rank {} asks for GPU {} but this machine has {} GPU{}",
               rank(), device, devices, devices == 1 ? "" : "s");
    check_cuda(cudaSetDevice(device), "cudaSetDevice", rank());
    check_cuda(cudaStreamCreateWithFlags(&handles_->stream, cudaStreamNonBlocking), "cudaStreamCreate", rank());
    ncclUniqueId id{};
    if (rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId", rank());
    bootstrap_.broadcast(&id, sizeof id, 0);
    check_nccl(ncclCommInitRank(&handles_->comm, size(), id, rank()), "ncclCommInitRank", rank());
  } catch (...) {
    if (handles_->stream != nullptr) cudaStreamDestroy(handles_->stream);
    delete handles_;
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() {
  if (handles_->comm != nullptr) ncclCommDestroy(handles_->comm);
  if (handles_->stream != nullptr) cudaStreamDestroy(handles_->stream);
  delete handles_;
}

void NcclCommunicator::all_reduce_sum(float* device_data, size_t count) {
  check_nccl(ncclAllReduce(device_data, device_data, count, ncclFloat32, ncclSum, handles_->comm, handles_->stream),
             "ncclAllReduce", rank());
  check_cuda(cudaStreamSynchronize(handles_->stream), "cudaStreamSynchronize after ncclAllReduce", rank());
}

void NcclCommunicator::all_reduce_sum(double* device_data, size_t count) {
  check_nccl(ncclAllReduce(device_data, device_data, count, ncclFloat64, ncclSum, handles_->comm, handles_->stream),
             "ncclAllReduce", rank());
  check_cuda(cudaStreamSynchronize(handles_->stream), "cudaStreamSynchronize after ncclAllReduce", rank());
}

std::unique_ptr<PendingCollective> NcclCommunicator::start_all_reduce_sum(float* device_data, size_t count,
                                                                          void* producer) {
  if (producer != nullptr) {
    // The communicator's stream waits, on the device, for what the producer has queued.
    cudaEvent_t produced = nullptr;
    check_cuda(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming), "cudaEventCreate", rank());
    cudaError_t status = cudaEventRecord(produced, static_cast<cudaStream_t>(producer));
    if (status == cudaSuccess) status = cudaStreamWaitEvent(handles_->stream, produced, 0);
    cudaEventDestroy(produced);  // the wait already holds the point it recorded
    check_cuda(status, "cudaStreamWaitEvent before ncclAllReduce", rank());
  }
  check_nccl(ncclAllReduce(device_data, device_data, count, ncclFloat32, ncclSum, handles_->comm, handles_->stream),
             "ncclAllReduce", rank());
  return std::make_unique<PendingEvent>(handles_->stream, rank());
}

void NcclCommunicator::broadcast(void* device_data, size_t bytes, int root) {
  ATTN_CHECK(root >= 0 && root < size(), "broadcast: root {} is not a rank of this world of {}", root, size());
  check_nccl(ncclBroadcast(device_data, device_data, bytes, ncclUint8, root, handles_->comm, handles_->stream),
             "ncclBroadcast", rank());
  check_cuda(cudaStreamSynchronize(handles_->stream), "cudaStreamSynchronize after ncclBroadcast", rank());
}

void NcclCommunicator::barrier() {
  check_cuda(cudaStreamSynchronize(handles_->stream), "cudaStreamSynchronize", rank());
  bootstrap_.barrier();
}

void NcclCommunicator::abort(const std::string& reason, int code) {
  if (handles_->comm != nullptr) ncclCommAbort(handles_->comm);
  handles_->comm = nullptr;
  bootstrap_.abort(reason, code);
  std::exit(code);  // GCC does not see [[noreturn]] through the virtual call above
}

}  // namespace attn::dist
