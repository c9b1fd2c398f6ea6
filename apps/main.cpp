// attnlab: one binary, one subcommand per file in apps/commands/ (see apps/cli/command.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "apps/cli/command.hpp"
#include "apps/cli/runtime_environment.hpp"
#include "data/standard_streams.hpp"
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

// A standard descriptor the command was started without (`<&-`, `>&-`) would be taken by the
// first file it opens: standard output written into a checkpoint, a checkpoint read as the
// input. Each gets /dev/null opened the wrong way round, so that reading or writing it still
// fails as on a closed descriptor ("Bad file descriptor").
void hold_closed_standard_descriptors() {
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) ::open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
}

// Output that could not be written (a full disk, /dev/full) must not end in exit code 0, and its
// error says why: std::cout keeps the reason of its first failed write
// (data::keep_standard_output_errors), and fmt::print throws "cannot write to file: REASON"
// without saying which file, named here when stdout is the stream in error.
int run_command(const attn::app::CommandAction& action) {
  attn::data::keep_standard_output_errors();
  try {
    const int exit_code = action();
    attn::data::check_standard_output_written();
    return exit_code;
  } catch (const std::system_error& error) {
    if (!std::ferror(stdout)) throw;
    attn::data::throw_standard_output_failed(error.code().value());
  }
}

}  // namespace

int main(int argc, char** argv) {
  hold_closed_standard_descriptors();
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
  attn::app::take_list_values_as_typed(app);  // after every flag is set up: it keeps their --help
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return command_line_error(app, e);
  }
  try {
    refuse_folder_on_stdin();
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return run_command(action);
  } catch (const std::bad_alloc&) {
    // "std::bad_alloc" alone does not say what ran out, nor what to do about it.
    std::cerr << "attnlab: error: out of memory: what the command was given (an input, a model, a batch of "
                 "--max-tokens) does not fit in the memory this process may use\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "attnlab: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
