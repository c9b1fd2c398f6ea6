// The `attnlab` command registry. Each command lives in its own file under apps/commands/ and
// registers itself with a static CommandRegistration:
//
//   static attn::app::CommandRegistration reg("tokenize", "Moses tokenizer (stdin -> stdout)",
//       [](CLI::App& cmd) { /* add options */ return [&opts]() { return run(opts); }; });
//
// The setup function adds options to the subcommand and returns the action run when the
// subcommand is chosen; the action returns the process exit code.
#pragma once
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace attn::app {

using CommandAction = std::function<int()>;
using CommandSetup = std::function<CommandAction(CLI::App&)>;

struct CommandInfo {
  std::string name, description;
  CommandSetup setup;
};

std::vector<CommandInfo>& command_registry();

// Checks that an option's value is a number > 0: "--beam: must be a number > 0, got '0'"
// (CLI::PositiveNumber's message prints its bounds as 0.000000 and a 309-digit maximum).
inline CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (CLI::detail::lexical_cast(text, value) && value > 0) return {};
        return "must be a number > 0, got '" + text + "'";
      },
      "POSITIVE");
}

// Checks that an option's value is a finite number >= 0 ("--max-len-b: must be a finite
// number >= 0, got '-5'"): NaN, infinities and negative values are refused at parse time.
inline CLI::Validator non_negative_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (CLI::detail::lexical_cast(text, value) && std::isfinite(value) && value >= 0) return {};
        return "must be a finite number >= 0, got '" + text + "'";
      },
      "NON-NEGATIVE");
}

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace attn::app
