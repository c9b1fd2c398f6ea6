// The key-value store where ranks that no MPI launcher started meet over TCP
// (--distributed-init-method tcp://HOST:PORT and env://, rendezvous.hpp). Rank 0 serves it on
// PORT of every IPv4 interface; every rank, rank 0 too, connects to HOST:PORT. gloo's
// full-mesh set-up (gloo_communicator.hpp) stores each rank's listening address under its
// rank and reads the others'; a read waits until its key has been set.
//
// The exchange, one request after another on a rank's connection (lengths are 32-bit
// unsigned, most significant byte first):
//   set  'S' key-length key value-length value  ->  'K'
//   get  'G' key-length key                     ->  value-length value, once the key is set
#pragma once
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace attn::dist {

class TcpStore final : public gloo::rendezvous::Store {
 public:
  // With `serve` (rank 0) this process first listens on `port` and answers every rank until
  // it is destroyed. Connecting retries until `timeout`: the server may start after a client.
  // Throws attn::Error naming tcp://HOST:PORT when it cannot listen or connect.
  TcpStore(const std::string& host, int port, bool serve, std::chrono::milliseconds timeout);
  ~TcpStore() override;
  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  void set(const std::string& key, const std::vector<char>& data) override;
  // Waits until `key` is set, for the timeout given to the constructor at most.
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  // This end's IPv4 address on the connection to the store: an interface that reaches HOST,
  // where the other ranks can reach this one.
  std::string local_address() const;

 private:
  class Server;

  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout);

  std::unique_ptr<Server> server_;  // rank 0 only
  std::string where_;               // "tcp://HOST:PORT", for messages
  std::chrono::milliseconds timeout_;
  int socket_ = -1;
};

}  // namespace attn::dist
