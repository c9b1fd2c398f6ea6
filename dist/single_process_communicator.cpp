// See single_process_communicator.hpp.
#include "dist/single_process_communicator.hpp"

#include <cstdlib>
#include <iostream>

#include "core/error.hpp"

namespace attn::dist {

void SingleProcessCommunicator::broadcast(void*, size_t, int root) {
  ATTN_CHECK(root == 0, "broadcast: root {} does not exist in a world of one process", root);
}

void SingleProcessCommunicator::abort(const std::string& reason, int code) {
  std::cerr << reason << "\n";
  std::exit(code);
}

}  // namespace attn::dist
