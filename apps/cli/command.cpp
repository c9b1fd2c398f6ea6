#include "apps/cli/command.hpp"

namespace attn::app {

std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

}  // namespace attn::app
