// See tcp_store.hpp.
#include "dist/tcp_store.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "core/error.hpp"

namespace attn::dist {
namespace {

constexpr char kSet = 'S', kGet = 'G', kDone = 'K';

// Why a socket call failed, for messages.
std::string system_error() { return std::strerror(errno); }

// Sends all `bytes`; false when the other end has gone.
bool send_all(int socket, const void* data, size_t bytes) {
  const char* at = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t sent = ::send(socket, at, bytes, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    at += sent;
    bytes -= size_t(sent);
  }
  return true;
}

enum class Received { kAll, kClosed, kTimedOut };

Received receive_all(int socket, void* data, size_t bytes) {
  char* at = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t got = ::recv(socket, at, bytes, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Received::kTimedOut;
    if (got <= 0) return Received::kClosed;
    at += got;
    bytes -= size_t(got);
  }
  return Received::kAll;
}

bool send_length(int socket, size_t length) {
  const uint32_t wire = htonl(uint32_t(length));
  return send_all(socket, &wire, sizeof wire);
}

// A length, then that many bytes.
Received receive_bytes(int socket, std::vector<char>& bytes) {
  uint32_t wire = 0;
  if (Received r = receive_all(socket, &wire, sizeof wire); r != Received::kAll) return r;
  bytes.resize(ntohl(wire));
  return bytes.empty() ? Received::kAll : receive_all(socket, bytes.data(), bytes.size());
}

void set_receive_timeout(int socket, std::chrono::milliseconds timeout) {
  const timeval limit{.tv_sec = time_t(timeout.count() / 1000), .tv_usec = suseconds_t(timeout.count() % 1000 * 1000)};
  ::setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
}

}  // namespace

// Rank 0's side: a thread accepts the ranks' connections, and a thread per connection
// answers its requests; a `get` of a key not yet set waits for the `set` from another rank.
class TcpStore::Server {
 public:
  Server(int port, const std::string& where) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    ATTN_CHECK(listener_ >= 0, "{}: cannot make a socket: {}", where, system_error());
    const int on = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);  // a restarted job takes the port at once
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(uint16_t(port));
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listener_, 128) != 0) {
      const std::string why = system_error();
      ::close(listener_);
      throw Error(fmt::format("{}: rank 0 cannot listen on port {}: {} (another job on that port? choose another)",
                              where, port, why));
    }
    acceptor_ = std::thread([this] { accept_ranks(); });
  }

  ~Server() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      for (int client : clients_) ::shutdown(client, SHUT_RDWR);  // wakes their threads' recv
    }
    key_set_.notify_all();
    ::shutdown(listener_, SHUT_RDWR);  // wakes accept
    acceptor_.join();
    for (std::thread& thread : answering_) thread.join();
    for (int client : clients_) ::close(client);
    ::close(listener_);
  }

 private:
  void accept_ranks() {
    for (;;) {
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0 && errno == EINTR) continue;
      std::lock_guard lock(mutex_);
      if (client < 0 || stopping_) {
        if (client >= 0) ::close(client);
        return;
      }
      clients_.push_back(client);
      answering_.emplace_back([this, client] { answer(client); });
    }
  }

  // One rank's requests, until it disconnects or the server stops.
  void answer(int client) {
    for (char request = 0; receive_all(client, &request, 1) == Received::kAll;) {
      std::vector<char> key, value;
      if (receive_bytes(client, key) != Received::kAll) return;
      const std::string name(key.begin(), key.end());
      if (request == kSet) {
        if (receive_bytes(client, value) != Received::kAll) return;
        {
          std::lock_guard lock(mutex_);
          values_[name] = std::move(value);
        }
        key_set_.notify_all();
        if (!send_all(client, &kDone, 1)) return;
      } else if (request == kGet) {
        {
          std::unique_lock lock(mutex_);
          key_set_.wait(lock, [&] { return stopping_ || values_.count(name) > 0; });
          if (stopping_) return;
          value = values_[name];
        }
        if (!send_length(client, value.size()) || !send_all(client, value.data(), value.size())) return;
      } else {
        return;  // not a rank of ours: drop it
      }
    }
  }

  int listener_ = -1;
  std::mutex mutex_;
  std::condition_variable key_set_;
  std::map<std::string, std::vector<char>> values_;
  std::vector<int> clients_;
  bool stopping_ = false;
  std::vector<std::thread> answering_;
  std::thread acceptor_;
};

namespace {

// A connected socket to host:port, trying again until `timeout` (the server may not listen yet).
int connect_to(const std::string& host, int port, std::chrono::milliseconds timeout, const std::string& where) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  ATTN_CHECK(status == 0, "{}: cannot resolve host '{}': {}", where, host, ::gai_strerror(status));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string why;
  for (;;) {
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      const int socket = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (socket >= 0 && ::connect(socket, a->ai_addr, a->ai_addrlen) == 0) {
        ::freeaddrinfo(found);
        const int on = 1;
        ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        return socket;
      }
      why = system_error();
      if (socket >= 0) ::close(socket);
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::freeaddrinfo(found);
  throw Error(fmt::format("{}: cannot reach rank 0's store within {} s: {} (is rank 0 started, with this address?)",
                          where, timeout.count() / 1000, why));
}

}  // namespace

TcpStore::TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout)
    : where_(fmt::format("tcp://{}:{}", host, port)), timeout_(timeout) {
  ATTN_CHECK(port > 0 && port < 65536, "{}: the port must be 1..65535", where_);
  if (serve) server_ = std::make_unique<Server>(port, where_);
  socket_ = connect_to(host, port, timeout, where_);
}

TcpStore::~TcpStore() {
  ::close(socket_);
  server_.reset();
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  char done = 0;
  set_receive_timeout(socket_, timeout_);
  const bool sent = send_all(socket_, &kSet, 1) && send_length(socket_, key.size()) &&
                    send_all(socket_, key.data(), key.size()) && send_length(socket_, data.size()) &&
                    send_all(socket_, data.data(), data.size());
  ATTN_CHECK(sent && receive_all(socket_, &done, 1) == Received::kAll && done == kDone,
             "{}: the store on rank 0 did not take key '{}' (rank 0 stopped?)", where_, key);
}

std::vector<char> TcpStore::get(const std::string& key) { return get(key, timeout_); }

std::vector<char> TcpStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  set_receive_timeout(socket_, timeout);
  ATTN_CHECK(send_all(socket_, &kGet, 1) && send_length(socket_, key.size()) && send_all(socket_, key.data(), key.size()),
             "{}: the store on rank 0 closed the connection (rank 0 stopped?)", where_);
  std::vector<char> value;
  const Received received = receive_bytes(socket_, value);
  ATTN_CHECK(received != Received::kTimedOut,
             "{}: key '{}' was not set within {} s: a rank has not arrived (is every rank started, with the same "
             "--distributed-init-method and --distributed-world-size?)",
             where_, key, timeout.count() / 1000);
  ATTN_CHECK(received == Received::kAll, "{}: the store on rank 0 closed the connection (rank 0 stopped?)", where_);
  return value;
}

void TcpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  for (const std::string& key : keys) get(key, timeout);
}

std::string TcpStore::local_address() const {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  ATTN_CHECK(::getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &length) == 0,
             "{}: cannot read this end's address: {}", where_, system_error());
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &address.sin_addr, text, sizeof text);
  return text;
}

}  // namespace attn::dist
