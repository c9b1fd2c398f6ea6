#include "apps/cli/command.hpp"

namespace attn::app {
namespace {

// CLI11's name of the type an option reads, without the validators' descriptions that
// get_type_name() appends after ':' ("INT:POSITIVE" -> "INT").
std::string base_type_name(const CLI::Option& option) {
  const std::string name = option.get_type_name();
  return name.substr(0, name.find(':'));
}

// The most values a list flag takes once CLI11's bracket reading is off. With that reading off
// (allow_extra_args) CLI11 limits a flag whose maximum is a 16th of its "unlimited" (2^29) or
// more to one value per flag; 2^24 is below that and above any command line.
constexpr int kMostListValues = 1 << 24;

// What --help prints after the flag's names: its type, default, "..." for a list, REQUIRED,
// the flags it needs; empty when `cmd` has a formatter of its own.
std::string help_after_names(const CLI::App& cmd, const CLI::Option& option) {
  const auto formatter = std::dynamic_pointer_cast<CLI::Formatter>(cmd.get_formatter());
  if (!formatter) return "";
  const std::string text = formatter->make_option_opts(&option);
  return text.starts_with(' ') ? text.substr(1) : text;  // the formatter puts back the space
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

void take_list_values_as_typed(CLI::App& cmd) {
  for (CLI::Option* option : cmd.get_options()) {
    // allow_extra_args is what both reads "[...]" as a list and marks a flag of unlimited values.
    if (!option->get_allow_extra_args() || option->get_positional()) continue;
    // Its help, taken while CLI11 still prints it as a list of any length ("TEXT ..."), is kept.
    const std::string help = help_after_names(cmd, *option);
    option->expected(option->get_expected_min(), kMostListValues)->allow_extra_args(false)->option_text(help);
  }
  for (CLI::App* sub : cmd.get_subcommands([](CLI::App*) { return true; })) take_list_values_as_typed(*sub);
}

}  // namespace attn::app
