// See gloo_communicator.hpp.
#include "dist/gloo_communicator.hpp"

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>

#include "core/error.hpp"

namespace attn::dist {

// Started all-reduces, run in the order they were started on a thread of their own.
class GlooCommunicator::Sequencer {
 public:
  struct Job {
    float* data = nullptr;
    size_t count = 0;
    bool finished = false;
    std::exception_ptr error;
  };

  explicit Sequencer(std::function<void(float*, size_t)> all_reduce)
      : all_reduce_(std::move(all_reduce)), thread_([this] { run_jobs(); }) {}

  ~Sequencer() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  // A started all-reduce, as the caller sees it.
  class Started final : public PendingCollective {
   public:
    Started(Sequencer& sequencer, std::shared_ptr<Job> job) : sequencer_(sequencer), job_(std::move(job)) {}
    bool test() override {
      std::lock_guard lock(sequencer_.mutex_);
      return job_->finished;
    }
    void wait() override {
      std::unique_lock lock(sequencer_.mutex_);
      sequencer_.changed_.wait(lock, [&] { return job_->finished; });
      if (job_->error) std::rethrow_exception(job_->error);
    }

   private:
    Sequencer& sequencer_;
    std::shared_ptr<Job> job_;  // shared with the queue: outlives an abandoned wait
  };

  std::unique_ptr<PendingCollective> start(float* data, size_t count) {
    auto job = std::make_shared<Job>();
    job->data = data;
    job->count = count;
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(job);
    }
    changed_.notify_all();
    return std::make_unique<Started>(*this, std::move(job));
  }

  // Returns once every started all-reduce has finished (failed ones too).
  void drain() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() && !running_; });
  }

 private:
  void run_jobs() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      std::shared_ptr<Job> job = queue_.front();
      queue_.pop_front();
      running_ = true;
      if (failure_) {
        job->error = failure_;  // the world is broken: later collectives fail the same way
      } else {
        lock.unlock();
        try {
          all_reduce_(job->data, job->count);
        } catch (...) {
          job->error = std::current_exception();
        }
        lock.lock();
        failure_ = job->error;
      }
      job->finished = true;
      running_ = false;
      changed_.notify_all();
    }
  }

  std::function<void(float*, size_t)> all_reduce_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool running_ = false, stopping_ = false;
  std::exception_ptr failure_;
  std::thread thread_;  // last: starts once the rest is made
};

namespace {

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

bool resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
  ::freeaddrinfo(found);
  return true;
}

// Where this rank listens for the others: GLOO_SOCKET_IFNAME's interface, else `address`,
// else this host's name, else (a name that does not resolve) the loopback interface.
gloo::transport::tcp::attr listening_address(const std::string& address) {
  gloo::transport::tcp::attr attr;
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface != nullptr && *interface != '\0') {
    attr.iface = interface;
  } else if (!address.empty()) {
    attr.hostname = address;
  } else if (const std::string host = this_host(); resolves(host)) {
    attr.hostname = host;
  } else {
    attr.hostname = "127.0.0.1";
    std::cerr << fmt::format("attnlab: warning: this host's name '{}' has no address; the ranks listen on 127.0.0.1, "
                             "which joins ranks of this machine only (GLOO_SOCKET_IFNAME=eth0, say, for several)\n",
                             host);
  }
  return attr;
}

// What each rank tells the others before gloo's own keys: its world size and host name.
std::string about_key(int rank) { return "attnlab/rank/" + std::to_string(rank); }

struct AboutRank {
  int world_size = 0;
  std::string host;
};

AboutRank read_about(gloo::rendezvous::Store& store, int rank) {
  store.wait({about_key(rank)}, GlooCommunicator::kTimeout);  // gloo's file store would read for 30 s only
  const std::vector<char> bytes = store.get(about_key(rank));
  const std::string text(bytes.begin(), bytes.end());
  const size_t space = text.find(' ');
  return {std::atoi(text.substr(0, space).c_str()), space == std::string::npos ? "" : text.substr(space + 1)};
}

}  // namespace

GlooCommunicator::GlooCommunicator(int rank, int size, gloo::rendezvous::Store& store, const std::string& address)
    : rank_(rank), size_(size) {
  // gloo writes to its peers' sockets with writev, which raises SIGPIPE when a peer has died:
  // ignored, the write fails with EPIPE, gloo throws, and this rank stops with an error naming
  // the lost peer instead of vanishing with exit status 141.
  ::signal(SIGPIPE, SIG_IGN);
  ATTN_CHECK(size >= 1 && rank >= 0 && rank < size, "gloo world: rank {} is not a rank of a world of {}", rank, size);
  const std::string host = this_host(), about = std::to_string(size) + " " + host;
  store.set(about_key(rank), std::vector<char>(about.begin(), about.end()));
  // A rank started with another world size would wait for ranks that never come: each rank
  // compares its own with rank 0's, and rank 0 with every rank's.
  const int first_compared = rank == 0 ? 1 : 0, end_compared = rank == 0 ? size : 1;
  for (int other = first_compared; other < end_compared; ++other) {
    const int theirs = read_about(store, other).world_size;
    ATTN_CHECK(theirs == size,
               "rank {} was started with --distributed-world-size {}, rank {} with {}: give every rank the same", rank,
               size, other, theirs);
  }
  run("meeting the other ranks", [&] {
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(listening_address(address));
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(kTimeout);
    context->connectFullMesh(store, device);
    context_ = std::move(context);
  });
  // This rank's place among the ranks on its machine (which GPU it takes), by host name.
  for (int other = 0; other < rank; ++other)
    if (read_about(store, other).host == host) ++local_rank_;
  sequencer_ = std::make_unique<Sequencer>([this](float* data, size_t count) { sum(data, count); });
  barrier();  // every rank has read what it needs: the store may go
}

GlooCommunicator::~GlooCommunicator() = default;

void GlooCommunicator::run(const char* what, const std::function<void()>& operation) const {
  try {
    operation();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("gloo: {} failed on rank {} of {}: {} (another rank stopped or cannot be reached: see "
                            "its output)",
                            what, rank_, size_, e.what()));
  }
}

template <typename T>
void GlooCommunicator::sum(T* data, size_t count) const {
  if (count == 0) return;
  run("all-reduce", [&] {
    gloo::AllreduceOptions options(context_);
    options.setOutput(data, count);  // in place
    options.setReduceFunction([](void* c, const void* a, const void* b, size_t n) { gloo::sum<T>(c, a, b, n); });
    gloo::allreduce(options);
  });
}

void GlooCommunicator::all_reduce_sum(float* data, size_t count) {
  sequencer_->drain();
  sum(data, count);
}

void GlooCommunicator::all_reduce_sum(double* data, size_t count) {
  sequencer_->drain();
  sum(data, count);
}

std::unique_ptr<PendingCollective> GlooCommunicator::start_all_reduce_sum(float* data, size_t count, void*) {
  return sequencer_->start(data, count);
}

void GlooCommunicator::broadcast(void* data, size_t bytes, int root) {
  ATTN_CHECK(root >= 0 && root < size_, "broadcast: root {} is not a rank of this world of {}", root, size_);
  sequencer_->drain();
  if (bytes == 0) return;
  run("broadcast", [&] {
    gloo::BroadcastOptions options(context_);
    options.setOutput(static_cast<uint8_t*>(data), bytes);  // the root's is the input too
    options.setRoot(root);
    gloo::broadcast(options);
  });
}

void GlooCommunicator::barrier() {
  sequencer_->drain();
  run("barrier", [&] {
    gloo::BarrierOptions options(context_);
    gloo::barrier(options);
  });
}

void GlooCommunicator::abort(const std::string& reason, int code) {
  std::cout.flush();
  std::fflush(nullptr);  // what went through C's stdio (fmt::print) too
  std::cerr << reason << std::endl;
  // Without running destructors: the communicator's thread may be inside a collective that
  // waits for another rank. This rank's connections close, and the others' collectives fail.
  std::_Exit(code);
}

}  // namespace attn::dist
