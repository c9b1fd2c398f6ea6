// The save dir lock. See save_dir_lock.hpp.
#include "apps/training/save_dir_lock.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace fs = std::filesystem;
namespace {

constexpr const char* kLockName = "train.lock";

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// When process `pid` started, in clock ticks since boot (/proc/PID/stat field 22), or "" when
// unknown. With the pid it tells a killed run's pid from the same pid given to a later
// process (containers restart their processes with the same small pids).
std::string process_start_ticks(int64_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t command_end = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (command_end == std::string::npos) return "";
  std::istringstream after_command(stat.substr(command_end + 1));
  const std::vector<std::string> fields{std::istream_iterator<std::string>(after_command), {}};
  constexpr size_t kStartTime = 22 - 3;  // fields[0] is field 3 (the state)
  return fields.size() > kStartTime ? fields[kStartTime] : "";
}

nlohmann::json this_run() {
  return {{"pid", int64_t(::getpid())},
          {"host", host_name()},
          {"started", fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(std::time(nullptr)))},
          {"process_start", process_start_ticks(::getpid())}};
}

// Writes the lock's contents to a temp file and links it to `lock`: false when `lock` exists.
bool try_create(const std::string& lock, const std::string& save_dir) {
  const std::string temp = lock + ".tmp." + std::to_string(::getpid());
  try {
    data::write_file_atomic(temp, this_run().dump() + "\n");
  } catch (const std::runtime_error& e) {  // data::DataError
    throw Error(fmt::format("train: save dir {} is not writable ({})", save_dir, e.what()));
  }
  const int linked = ::link(temp.c_str(), lock.c_str());
  const int error = errno;
  ::unlink(temp.c_str());
  if (linked == 0) return true;
  ATTN_CHECK(error == EEXIST, "train: cannot create the lock {}: {}", lock, std::strerror(error));
  return false;
}

// Whether the run that wrote a lock still runs: its pid exists and, when the lock recorded
// it, started at the same time.
bool owner_runs(const nlohmann::json& owner) {
  const int64_t pid = owner["pid"].get<int64_t>();
  if (::kill(pid_t(pid), 0) != 0 && errno != EPERM) return false;
  const std::string recorded = owner.value("process_start", std::string());
  const std::string now = process_start_ticks(pid);
  return recorded.empty() || now.empty() || now == recorded;
}

// A lock of this host whose run is gone; a lock from another host cannot be checked.
bool is_stale(const nlohmann::json& owner) { return owner["host"] == host_name() && !owner_runs(owner); }

// The owner recorded in an existing lock file; nothing when it is unreadable.
std::optional<nlohmann::json> parse_owner(const std::string& lock) {
  std::ifstream in(lock);
  nlohmann::json owner = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const bool valid = owner.is_object() && owner.contains("pid") && owner["pid"].is_number_integer() &&
                     owner.contains("host") && owner["host"].is_string() && owner.contains("started") &&
                     owner["started"].is_string();
  if (!valid) return std::nullopt;
  return owner;
}

// The owner recorded in an existing lock file, or an error naming it when it is unreadable.
nlohmann::json read_owner(const std::string& lock) {
  std::optional<nlohmann::json> owner = parse_owner(lock);
  ATTN_CHECK(owner.has_value(),
             "train: the save dir lock {} is not a lock attnlab wrote; remove it if no training runs there", lock);
  return *owner;
}

std::string describe_owner(const nlohmann::json& owner) {
  return fmt::format("pid {} on host {}, started {}", owner["pid"].get<int64_t>(), owner["host"].get<std::string>(),
                     owner["started"].get<std::string>());
}

}  // namespace

SaveDirLock::SaveDirLock(const std::string& save_dir, const std::function<void(const std::string&)>& warn)
    : path_((fs::path(save_dir) / kLockName).string()) {
  data::create_folders(save_dir, "--save-dir");
  if (try_create(path_, save_dir)) return;
  const nlohmann::json owner = read_owner(path_);
  ATTN_CHECK(is_stale(owner),
             "train: save dir {} is in use by another training run ({}; lock file {}). "
             "Wait for it to finish or use another --save-dir; if that run is gone, remove the lock file",
             save_dir, describe_owner(owner), path_);
  warn(fmt::format("warning: taking over the stale lock {} of a run that no longer runs (pid {}, started {})", path_,
                   owner["pid"].get<int64_t>(), owner["started"].get<std::string>()));
  fs::remove(path_);
  ATTN_CHECK(try_create(path_, save_dir), "train: save dir {} was locked by another run just now (lock file {})",
             save_dir, path_);
}

SaveDirLock::~SaveDirLock() { ::unlink(path_.c_str()); }

std::optional<std::string> running_training(const std::string& dir) {
  const std::string lock = (fs::path(dir.empty() ? "." : dir) / kLockName).string();
  if (!fs::exists(lock)) return std::nullopt;
  const std::optional<nlohmann::json> owner = parse_owner(lock);
  if (!owner) return fmt::format("lock file {}, which attnlab cannot read", lock);
  if (is_stale(*owner)) return std::nullopt;
  return fmt::format("{}; lock file {}", describe_owner(*owner), lock);
}

}  // namespace attn::app
