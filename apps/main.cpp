// attnlab: one binary, one subcommand per file in apps/commands/ (see apps/cli/command.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/cli/runtime_environment.hpp"
#ifdef ATTNLAB_WITH_CUDA
#include "cuda/cuda_device_runtime.hpp"
#endif

namespace {

// --help exits 0. A rejected command line exits 2, as getopt and argparse tools do (CLI11's
// own codes, 105-109, read like an error of the command itself); a first word that is no
// command is named (CLI11 would only say "A subcommand is required").
int command_line_error(CLI::App& app, const CLI::ParseError& e) {
  const std::vector<std::string> unknown = app.remaining();
  if (e.get_exit_code() != 0 && app.get_subcommands().empty() && !unknown.empty() && !unknown.front().starts_with("-")) {
    std::cerr << "attnlab: unknown command '" << unknown.front() << "' (attnlab --help lists the commands)\n";
    return 2;
  }
  return app.exit(e) == 0 ? 0 : 2;
}

// A folder given as standard input (`attnlab tokenize < dir`) reads as an empty file, which a
// filter would turn into an empty output and exit 0.
void refuse_folder_on_stdin() {
  struct stat status {};
  if (::fstat(STDIN_FILENO, &status) == 0 && S_ISDIR(status.st_mode))
    throw std::runtime_error("standard input is a folder, not a file");
}

// The reason standard output could not be written, when a write tried again now fails with
// one. The failed write's errno is gone by now (a stream in error writes nothing more, and
// later calls reuse errno), but std::cout's own buffer (after sync_with_stdio(false)) keeps
// the bytes it could not write, so writing them again fails the same way: "No space left on
// device". Bytes written past the buffer, and stdio's buffer, are dropped on a failed write:
// then no reason is known.
std::string retried_write_error() {
  errno = 0;
  std::cout.clear();
  std::cout.flush();
  return errno != 0 ? std::strerror(errno) : "";
}

// Output that could not be written (a full disk, /dev/full) must not end in exit code 0: the
// streams keep their error until the end, so one check after the command covers every write.
void check_stdout_written() {
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout) return;
  const std::string reason = errno != 0 ? std::strerror(errno) : retried_write_error();
  throw std::runtime_error(fmt::format("writing standard output failed{}", reason.empty() ? "" : ": " + reason));
}

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);
#ifdef ATTNLAB_WITH_CUDA
  attn::cuda::install_cuda_runtime();  // lists GPUs in `info`; `--device cuda:N` switches one on
#endif
  CLI::App app{"attnlab: a from-scratch tensor engine and sequence-model toolkit for translation"};
  app.require_subcommand(1);
  auto& registry = attn::app::command_registry();
  std::sort(registry.begin(), registry.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::map<CLI::App*, attn::app::CommandAction> actions;
  for (auto& info : registry) {
    CLI::App* sub = app.add_subcommand(info.name, info.description);
    actions[sub] = info.setup(*sub);
  }
  attn::app::check_integer_flags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return command_line_error(app, e);
  }
  try {
    refuse_folder_on_stdin();
    for (auto& [sub, action] : actions)
      if (sub->parsed()) {
        const int exit_code = action();
        check_stdout_written();
        return exit_code;
      }
  } catch (const std::exception& e) {
    std::cerr << "attnlab: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
