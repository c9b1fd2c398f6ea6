// The `attnlab` command registry. Each command lives in its own file under apps/commands/ and
// registers itself with a static CommandRegistration:
//
//   static attn::app::CommandRegistration reg("tokenize", "Moses tokenizer (stdin -> stdout)",
//       [](CLI::App& cmd) { /* add options */ return [&opts]() { return run(opts); }; });
//
// The setup function adds options to the subcommand and returns the action run when the
// subcommand is chosen; the action returns the process exit code.
#pragma once
#include <charconv>
#include <cmath>
#include <concepts>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
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

// An option given alone or with one of `choices` (argparse's nargs="?" with a const): alone it
// sets `target` to the first choice; not given, it leaves `target` as it is.
inline CLI::Option* add_optional_choice(CLI::App& cmd, const std::string& name, std::string& target,
                                        const std::string& help, const std::vector<std::string>& choices) {
  return cmd.add_option(name, target, help)->expected(0, 1)->check(CLI::IsMember(choices))->default_str(choices.front());
}

// An option whose being typed matters beside its value (fairseq's --replace-unk, which may come
// alone): `typed` says whether it was given, `value` holds its value when one was (and is left
// as it is otherwise, shown as the default).
inline CLI::Option* add_option_noting_typed(CLI::App& cmd, const std::string& name, std::string& value, bool& typed,
                                            const std::string& help) {
  CLI::callback_t note = [&value, &typed](const CLI::results_t& results) {
    typed = true;
    if (!results.empty()) value = results.front();
    return true;
  };
  return cmd.add_option(name, note, help)->type_name("TEXT")->default_str(value);
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

// The integers of [low, high] in words, a bound that is T's own limit left unsaid: "an
// integer in [1, 1024]", "a non-negative integer", "a positive integer", "an integer >= 2",
// "an integer".
template <std::integral T>
std::string integer_range_words(T low, T high) {
  constexpr T kMin = std::numeric_limits<T>::min(), kMax = std::numeric_limits<T>::max();
  if (high != kMax) return low == kMin ? fmt::format("an integer <= {}", high) : fmt::format("an integer in [{}, {}]", low, high);
  if (low == 0) return "a non-negative integer";
  if (low == 1) return "a positive integer";
  return low == kMin ? "an integer" : fmt::format("an integer >= {}", low);
}

// The same for --help, after the flag's type: "[1, 1024]", ">= 0", "<= 5".
template <std::integral T>
std::string integer_range_brief(T low, T high) {
  if (high != std::numeric_limits<T>::max())
    return low == std::numeric_limits<T>::min() ? fmt::format("<= {}", high) : fmt::format("[{}, {}]", low, high);
  return fmt::format(">= {}", low);
}

// A validator for a flag read into an integer of type T: a decimal integer in [low, high], by
// default anything T holds, else "--seed: must be a non-negative integer, got '-1'" or
// "--threads: must be an integer in [1, 1024], got '0'". CLI11 alone reads "-1" into an
// unsigned flag as 2^64 - 1, and a number too large for T as T's largest, silently.
template <std::integral T>
CLI::Validator integer_in_range(std::type_identity_t<T> low = std::numeric_limits<T>::min(),
                                std::type_identity_t<T> high = std::numeric_limits<T>::max()) {
  const bool whole_type = low == std::numeric_limits<T>::min() && high == std::numeric_limits<T>::max();
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        T value{};
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (!text.empty() && error == std::errc() && stop == end && value >= low && value <= high) return {};
        if (error == std::errc::result_out_of_range && stop == end)
          return fmt::format("must be {}, got '{}', beyond the {} it holds ({})", integer_range_words<T>(low, high),
                             text, text.starts_with('-') ? "smallest" : "largest", text.starts_with('-') ? low : high);
        return fmt::format("must be {}, got '{}'", integer_range_words<T>(low, high), text);
      },
      whole_type ? std::string() : integer_range_brief<T>(low, high));
}

// Adds a flag read into the integer `variable`, checked by integer_in_range (by default: any
// value of its type).
template <std::integral T>
CLI::Option* add_integer_option(CLI::App& cmd, const std::string& name, T& variable, const std::string& description,
                                std::type_identity_t<T> low = std::numeric_limits<T>::min(),
                                std::type_identity_t<T> high = std::numeric_limits<T>::max()) {
  return cmd.add_option(name, variable, description)->check(integer_in_range<T>(low, high));
}

// Gives every flag of `cmd` and its subcommands that CLI11 reads into an integer a check that
// its value is a decimal integer (no '-' for an unsigned one): "--beam: must be an integer,
// got '1.5'", where CLI11 alone says "Could not convert: --beam = 1.5", and reads "-1" into an
// unsigned flag as 2^64 - 1: integer_in_range over the whole of int64_t or uint64_t. Narrower
// ranges stay with each flag's own check.
void check_integer_flags(CLI::App& cmd);

// Makes every list flag of `cmd` and its subcommands take its values as typed. CLI11 reads a
// value "[...]" given to a list flag as a comma-separated list without its brackets: `--inputs
// '[a,b]'` gave two checkpoints a and b, `--glossaries '[A-Z]'` the regex A-Z, and `--inputs
// '[]'` none, the flag then taking the next word (`--output`) as its value. Each such flag keeps
// taking several values per flag (`--inputs a b c`), repeats, and a delimiter it has; --help
// prints it as before ("TEXT ..."). A positional list (`plot RUNS...`) keeps CLI11's reading:
// CLI11 2.1 feeds a positional several words only while that reading is on.
void take_list_values_as_typed(CLI::App& cmd);

// A validator refusing an empty value, where an empty value would read as the flag left out
// (`inspect --target ""` decoded the model's own translation): "--target: is empty (ADVICE)".
inline CLI::Validator not_empty(std::string advice) {
  return CLI::Validator(
      [advice](std::string& text) { return text.empty() ? "is empty (" + advice + ")" : std::string(); }, "");
}

// The data dir argument of the commands that read `attnlab preprocess`'s output (train,
// validate, generate): required and not empty ("" was looked for as a folder of that name:
// "data dir  does not exist").
inline CLI::Option* add_data_dir_argument(CLI::App& cmd, std::string& data_dir, const std::string& description) {
  return cmd.add_option("data", data_dir, description)
      ->required()
      ->check(not_empty("name the folder `attnlab preprocess` wrote; '.' is the current one"));
}

// The most threads a thread-count flag takes (-j of tokenize and detokenize, --workers of
// preprocess, --threads of the model commands). Every thread is started at once (OpenMP), and
// libgomp fails on tens of thousands of them: a crash, or "Thread creation failed". 1024 is
// twice the hardware threads of the largest two-socket servers, so no machine loses speed to it.
constexpr int kMaxThreads = 1024;

inline CLI::Validator thread_count() { return integer_in_range<int>(1, kMaxThreads); }

struct CommandRegistration {
  CommandRegistration(std::string name, std::string description, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace attn::app
