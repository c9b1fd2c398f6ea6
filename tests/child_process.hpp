// Helpers for tests that run programs (the attnlab binary, mpirun): start one with its
// output in a log file, poll whether it ended, run one or several at once to their end under
// a time limit, build an `mpirun -np N` command line, and find a free TCP port.
#pragma once
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
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
#include <utility>
#include <vector>

namespace attn::test {

using Environment = std::vector<std::pair<std::string, std::string>>;  // variables set for a child

// Starts `command` (argv, the program first) with stdout and stderr appended to `log` and
// `environment` added to this process's, in its own process group (so that a test can end it
// and everything it started).
inline pid_t start(const std::vector<std::string>& command, const std::string& log, const Environment& environment = {}) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setpgid(0, 0);
  for (const auto& [name, value] : environment) ::setenv(name.c_str(), value.c_str(), 1);
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

struct Program {
  std::vector<std::string> command;
  std::string log;  // its output goes there
  Environment environment = {};
};

// Runs `programs` side by side to their ends, for `timeout_seconds` at most (then kills the
// process groups of those still running).
inline std::vector<ProgramRun> run_programs(const std::vector<Program>& programs, int timeout_seconds) {
  std::vector<pid_t> pids;
  for (const Program& program : programs) {
    std::filesystem::remove(program.log);
    pids.push_back(start(program.command, program.log, program.environment));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  std::vector<std::optional<int>> statuses(pids.size());
  for (size_t i = 0; i < pids.size(); ++i) {
    statuses[i] = wait_until(pids[i], [&] { return std::chrono::steady_clock::now() >= deadline; });
    if (!statuses[i]) {
      ::kill(-pids[i], SIGKILL);
      ::waitpid(pids[i], nullptr, 0);
    }
  }
  std::vector<ProgramRun> runs;
  for (size_t i = 0; i < pids.size(); ++i) {
    std::ifstream in(programs[i].log);
    std::stringstream output;
    output << in.rdbuf();
    runs.push_back({statuses[i].value_or(-1), output.str()});
  }
  return runs;
}

// Runs `command` to its end, or for `timeout_seconds` at most (then kills its process group).
inline ProgramRun run_program(const std::vector<std::string>& command, const std::string& log, int timeout_seconds) {
  return run_programs({{command, log}}, timeout_seconds)[0];
}

// A TCP port of the loopback interface that nothing listens on now (the kernel's choice).
inline int free_tcp_port() {
  const int socket = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ::bind(socket, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::getsockname(socket, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(socket);
  return ntohs(address.sin_port);
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
