#include "apps/cli/command.hpp"

namespace attn::app {
namespace {

// CLI11's name of the type an option reads, without the validators' descriptions that
// get_type_name() appends after ':' ("INT:POSITIVE" -> "INT").
std::string base_type_name(const CLI::Option& option) {
  const std::string name = option.get_type_name();
  return name.substr(0, name.find(':'));
}

}  // namespace

std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

void check_integer_flags(CLI::App& cmd) {
  for (CLI::Option* option : cmd.get_options()) {
    const std::string type = base_type_name(*option);
    if (option->get_type_size() <= 0) continue;  // a switch takes no value to check
    // The widest type's whole range: only the form is checked here; ranges stay with each flag.
    if (type == "INT") option->check(integer_in_range<int64_t>());
    if (type == "UINT") option->check(integer_in_range<uint64_t>());
  }
  for (CLI::App* sub : cmd.get_subcommands([](CLI::App*) { return true; })) check_integer_flags(*sub);
}

}  // namespace attn::app
