// See mpi_communicator.hpp.
#include "dist/mpi_communicator.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "core/error.hpp"

namespace attn::dist {
namespace {

// MPI counts are ints: longer buffers go in pieces of this many elements.
constexpr size_t kMaxPiece = size_t(1) << 30;

template <typename Call>
void in_pieces(size_t count, Call call) {
  for (size_t begin = 0; begin < count; begin += kMaxPiece) call(begin, int(std::min(kMaxPiece, count - begin)));
}

}  // namespace

class MpiCommunicator::PendingRequests final : public PendingCollective {
 public:
  explicit PendingRequests(const MpiCommunicator& world) : world_(world) {}
  std::vector<MPI_Request> requests;  // one per piece; MPI_REQUEST_NULL once finished

  bool test() override {
    int finished = 0;
    world_.check(MPI_Testall(int(requests.size()), requests.data(), &finished, MPI_STATUSES_IGNORE), "MPI_Testall");
    return finished != 0;
  }
  void wait() override {
    world_.check(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

 private:
  const MpiCommunicator& world_;
};

bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(variable) != nullptr) return true;
  return false;
}

MpiCommunicator::MpiCommunicator() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  ATTN_CHECK(!initialized, "MPI: the world was already joined in this process");
  int provided = 0;
  ATTN_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS,
             "MPI: MPI_Init_thread failed (was this process started by mpirun?)");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  // The ranks sharing this machine's memory, numbered by world rank: this rank's place there.
  MPI_Comm machine = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &machine),
        "MPI_Comm_split_type");
  check(MPI_Comm_rank(machine, &local_rank_), "MPI_Comm_rank (machine)");
  MPI_Comm_free(&machine);
}

MpiCommunicator::~MpiCommunicator() { MPI_Finalize(); }

void MpiCommunicator::check(int status, const char* call) const {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error(fmt::format("{} failed on rank {} of {}: {}", call, rank_, size_, std::string(text, size_t(length))));
}

void MpiCommunicator::all_reduce_sum(float* data, size_t count) {
  in_pieces(count, [&](size_t begin, int n) {
    check(MPI_Allreduce(MPI_IN_PLACE, data + begin, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  });
}

void MpiCommunicator::all_reduce_sum(double* data, size_t count) {
  in_pieces(count, [&](size_t begin, int n) {
    check(MPI_Allreduce(MPI_IN_PLACE, data + begin, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  });
}

std::unique_ptr<PendingCollective> MpiCommunicator::start_all_reduce_sum(float* data, size_t count, void*) {
  auto pending = std::make_unique<PendingRequests>(*this);
  in_pieces(count, [&](size_t begin, int n) {
    MPI_Request& request = pending->requests.emplace_back(MPI_REQUEST_NULL);
    check(MPI_Iallreduce(MPI_IN_PLACE, data + begin, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request), "MPI_Iallreduce");
  });
  return pending;
}

void MpiCommunicator::broadcast(void* data, size_t bytes, int root) {
  ATTN_CHECK(root >= 0 && root < size_, "broadcast: root {} is not a rank of this world of {}", root, size_);
  auto* base = static_cast<char*>(data);
  in_pieces(bytes, [&](size_t begin, int n) { check(MPI_Bcast(base + begin, n, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast"); });
}

void MpiCommunicator::barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void MpiCommunicator::abort(const std::string& reason, int code) {
  std::cerr << reason << std::endl;
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest if it did
}

}  // namespace attn::dist
