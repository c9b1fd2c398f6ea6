#include "apps/cli/command.hpp"

namespace attn::app {
namespace {

// A decimal integer, with a leading '-' unless `is_unsigned`. Only the form is checked: a
// number too large for the flag's type is left to CLI11, and ranges to integer_in_range.
CLI::Validator integer_text(bool is_unsigned) {
  return CLI::Validator(
      [is_unsigned](std::string& text) -> std::string {
        const size_t digits = !is_unsigned && text.starts_with('-') ? 1 : 0;
        if (text.size() > digits && text.find_first_not_of("0123456789", digits) == std::string::npos) return {};
        return fmt::format("must be {}, got '{}'", is_unsigned ? "a non-negative integer" : "an integer", text);
      },
      "");
}

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
    // A switch (type size 0) takes no value to check.
    if (option->get_type_size() > 0 && (type == "INT" || type == "UINT")) option->check(integer_text(type == "UINT"));
  }
  for (CLI::App* sub : cmd.get_subcommands([](CLI::App*) { return true; })) check_integer_flags(*sub);
}

}  // namespace attn::app
