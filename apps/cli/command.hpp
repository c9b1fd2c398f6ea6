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
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace attn::app {

using CommandAction = std::function<int()>;
using CommandSetup = std::function<CommandAction(CLI::App&)>;

struct CommandInfo {
  std::string name, description;
  CommandSetup setup;
};

std::vector<CommandInfo>& command_registry();

// A validator that refuses, at parse time, what is not a finite number meeting `condition`:
// "--beam: must be a finite number > 0, got '0'" (CLI::PositiveNumber's message prints its
// bounds as 0.000000 and a 309-digit maximum, and NaN or an infinity passes some of its checks).
template <typename Condition>
CLI::Validator finite_number_that(Condition condition, std::string requirement, std::string name) {
  return CLI::Validator(
      [condition, requirement](std::string& text) -> std::string {
        double value = 0;
        if (CLI::detail::lexical_cast(text, value) && std::isfinite(value) && condition(value)) return {};
        return "must be a finite number" + requirement + ", got '" + text + "'";
      },
      std::move(name));
}

inline CLI::Validator positive_number() {
  return finite_number_that([](double v) { return v > 0; }, " > 0", "POSITIVE");
}

inline CLI::Validator non_negative_number() {
  return finite_number_that([](double v) { return v >= 0; }, " >= 0", "NON-NEGATIVE");
}

inline CLI::Validator number_in_range(double low, double high) {
  return finite_number_that([low, high](double v) { return v >= low && v <= high; },
                            fmt::format(" in [{}, {}]", low, high), fmt::format("[{}, {}]", low, high));
}

// Any finite number (a length penalty, an unknown-word penalty): NaN and infinities only are refused.
inline CLI::Validator finite_number() {
  return finite_number_that([](double) { return true; }, "", "FINITE");
}

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace attn::app
