// How ranks that no MPI launcher started find each other: fairseq's --distributed-init-method
// (the addresses of PyTorch's rendezvous), for torchrun, Slurm scripts, Kubernetes jobs and
// hand-started processes. Every rank is given the same method and world size and its own rank:
//   tcp://HOST:PORT  rank 0 serves a key-value store on PORT (tcp_store.hpp) and every rank
//                    connects to HOST:PORT, HOST being rank 0's machine;
//   env://           the same with HOST = MASTER_ADDR, PORT = MASTER_PORT, and the world size
//                    and rank from WORLD_SIZE and RANK where the flags leave them out (torchrun
//                    sets all four);
//   file:///DIR      a directory that every rank sees (a shared file system across machines),
//                    empty or absent at the start; the ranks remove what they wrote there
//                    once they have met.
// The ranks then form a gloo world (gloo_communicator.hpp).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "dist/communicator.hpp"

namespace attn::dist {

struct Rendezvous {
  std::string init_method;  // as given, for messages
  bool over_tcp = true;     // tcp:// or env://; else file://
  std::string host;         // over TCP: rank 0's machine
  int port = 0;
  std::string directory;  // file://
  int world_size = 1, rank = 0;
};

// The rendezvous `init_method` asks for, with the world size and rank from the flags (or for
// env:// the environment). Throws attn::Error naming what is missing or wrong.
Rendezvous plan_rendezvous(const std::string& init_method, std::optional<int> world_size, std::optional<int> rank);

// Meets the other ranks of `plan` (each calls it with its own rank) and returns their world
// once all have arrived. Throws attn::Error naming the rendezvous when they cannot meet.
std::unique_ptr<Communicator> meet(const Rendezvous& plan);

}  // namespace attn::dist
