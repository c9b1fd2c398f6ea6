// Helpers for tests that run programs (the attnlab binary, mpirun): start one with its
// output in a log file, poll whether it ended, run one to its end under a time limit, and
// build an `mpirun -np N` command line.
#pragma once
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace attn::test {

// Starts `command` (argv, the program first) with stdout and stderr appended to `log`, in
// its own process group (so that a test can end it and everything it started).
inline pid_t start(const std::vector<std::string>& command, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setpgid(0, 0);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  ::_exit(127);
}

// The exit status of a finished child (128 + N for signal N), or none while it runs.
inline std::optional<int> finished(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) != pid) return std::nullopt;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Waits until `ready` holds or the child ends; returns its exit status when it ended.
template <typename Condition>
std::optional<int> wait_until(pid_t pid, Condition ready) {
  while (!ready()) {
    if (std::optional<int> status = finished(pid)) return status;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return std::nullopt;
}

struct ProgramRun {
  int exit_code = -1;  // 128 + N when signal N ended it; -1 when it ran past the time limit
  std::string output;  // stdout and stderr together
};

// Runs `command` to its end, or for `timeout_seconds` at most (then kills its process group).
inline ProgramRun run_program(const std::vector<std::string>& command, const std::string& log, int timeout_seconds) {
  std::filesystem::remove(log);
  const pid_t pid = start(command, log);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  const std::optional<int> status = wait_until(pid, [&] { return std::chrono::steady_clock::now() >= deadline; });
  if (!status) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  std::ifstream in(log);
  std::stringstream output;
  output << in.rdbuf();
  return {status.value_or(-1), output.str()};
}

// `mpirun -np N` with what it needs here (several ranks on few cores, unbound, as root in a
// container: Open MPI's run-as-root switches are set in this process's environment, which
// the children inherit), or none when mpirun is not on PATH.
inline std::optional<std::vector<std::string>> mpirun_command(int ranks) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string mpirun = dir + "/mpirun";
    if (::access(mpirun.c_str(), X_OK) != 0) continue;
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    return std::vector<std::string>{mpirun, "-np", std::to_string(ranks), "--oversubscribe", "--bind-to", "none"};
  }
  return std::nullopt;
}

}  // namespace attn::test
