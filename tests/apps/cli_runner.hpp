// Running the `attnlab` binary (ATTNLAB_BINARY, defined for the programs that tests/CMakeLists.txt
// names) as a user would, through the shell, in a TempDir, under `timeout`; and the checks on
// its exit code and stderr that the tests of bad input share: exit code 1 with one line
// "attnlab: error: ..." (a runtime error) or 2 (a command-line error), never a signal or a hang.
#pragma once
#include <catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "test_support.hpp"

namespace attn::test {

constexpr int kRuntimeError = 1;      // apps/main.cpp: the command threw
constexpr int kCommandLineError = 2;  // apps/main.cpp: CLI11 rejected the arguments
constexpr int kTimeoutSeconds = 120;  // far above any run here: only a hang reaches it

struct CommandResult {
  int exit_code = -1;  // the exit status, or 128 + N when signal N killed the process
  std::string out, err;
};

inline std::string shell_quoted(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs `attnlab ARGS...` in `dir` with standard input and output as the shell redirections
// `input` ("< FILE", "<&3" for a descriptor of this process, "<&-" for none) and `output`
// ("> FILE", ">&-"; empty: a file read back as `out`), after the shell commands `setup` (such
// as a `ulimit`; empty: none).
inline CommandResult run_attnlab_redirected(const TempDir& dir, const std::vector<std::string>& args,
                                            const std::string& input, const std::string& output = "",
                                            const std::string& setup = "") {
  std::string command = fmt::format("cd {} && {} timeout -k 5 {} {}", shell_quoted(dir.dir.string()),
                                    setup.empty() ? "" : setup + " &&", kTimeoutSeconds, shell_quoted(ATTNLAB_BINARY));
  for (const std::string& arg : args) command += fmt::format(" {}", shell_quoted(arg));
  const std::string out = dir.file("command.stdout"), err = dir.file("command.stderr");
  command += fmt::format(" {} {} 2> {}", input, output.empty() ? "> " + shell_quoted(out) : output, shell_quoted(err));
  const int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (output.empty()) result.out = read_file(out);
  result.err = read_file(err);
  return result;
}

// Runs `attnlab ARGS...` in `dir` with standard input from the file `input`, and standard
// output into `output` when one is given (such as /dev/full; `out` stays empty), else into a
// file read back as `out`.
inline CommandResult run_attnlab(const TempDir& dir, const std::vector<std::string>& args,
                                 const std::string& input = "/dev/null", const std::string& output = "") {
  return run_attnlab_redirected(dir, args, "< " + shell_quoted(input),
                                output.empty() ? "" : "> " + shell_quoted(output));
}

inline void require_success(const CommandResult& result) {
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == 0);
}

// A runtime error: exit code 1 and exactly one line on stderr, mentioning each of `names`.
inline void require_runtime_error(const CommandResult& result, const std::vector<std::string>& names) {
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == kRuntimeError);
  REQUIRE(result.err.starts_with("attnlab: error: "));
  REQUIRE(result.err.find('\n') == result.err.size() - 1);
  for (const std::string& name : names) CHECK(result.err.find(name) != std::string::npos);
}

// A command-line error: exit code 2 and a first stderr line mentioning `name`.
inline void require_command_line_error(const CommandResult& result, const std::string& name) {
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == kCommandLineError);
  CHECK(result.err.substr(0, result.err.find('\n')).find(name) != std::string::npos);
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace attn::test
