// See rendezvous.hpp.
#include "dist/rendezvous.hpp"

#include <gloo/rendezvous/file_store.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "dist/gloo_communicator.hpp"
#include "dist/tcp_store.hpp"

namespace attn::dist {
namespace {

constexpr std::string_view kTcp = "tcp://", kEnv = "env://", kFile = "file://";

// A whole decimal number, or none.
std::optional<int> whole_number(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::optional<std::string>(value) : std::nullopt;
}

// A number that the flag `flag` gives, or else (env://) the variable `variable`; both must agree.
std::optional<int> flag_or_variable(std::optional<int> flag, const char* flag_name, const char* variable,
                                    bool read_variable) {
  const std::optional<std::string> text = read_variable ? environment(variable) : std::nullopt;
  if (!text) return flag;
  const std::optional<int> value = whole_number(*text);
  ATTN_CHECK(value && *value >= 0, "--distributed-init-method env://: {}={} is not a number", variable, *text);
  ATTN_CHECK(!flag || *flag == *value, "{} {} contradicts {}={} (env://)", flag_name, *flag, variable, *value);
  return value;
}

void parse_host_and_port(Rendezvous& plan, std::string_view address) {
  const size_t colon = address.rfind(':');
  ATTN_CHECK(colon != std::string_view::npos && colon > 0,
             "--distributed-init-method {}: expected tcp://HOST:PORT (HOST: rank 0's machine)", plan.init_method);
  plan.host = std::string(address.substr(0, colon));
  const std::optional<int> port = whole_number(address.substr(colon + 1));
  ATTN_CHECK(port && *port > 0 && *port < 65536, "--distributed-init-method {}: the port '{}' is not a number 1..65535",
             plan.init_method, address.substr(colon + 1));
  plan.port = *port;
}

}  // namespace

Rendezvous plan_rendezvous(const std::string& init_method, std::optional<int> world_size, std::optional<int> rank) {
  Rendezvous plan;
  plan.init_method = init_method;
  const std::string_view method = init_method;
  const bool from_environment = method == kEnv;
  if (method.starts_with(kTcp)) {
    parse_host_and_port(plan, method.substr(kTcp.size()));
  } else if (from_environment) {
    const std::optional<std::string> host = environment("MASTER_ADDR"), port = environment("MASTER_PORT");
    ATTN_CHECK(host && port, "--distributed-init-method env:// needs MASTER_ADDR and MASTER_PORT (rank 0's machine "
                             "and a free port on it; torchrun sets them)");
    parse_host_and_port(plan, *host + ":" + *port);
  } else if (method.starts_with(kFile) && method.size() > kFile.size()) {
    plan.over_tcp = false;
    plan.directory = std::string(method.substr(kFile.size()));
  } else {
    throw Error(fmt::format("--distributed-init-method {}: not one of tcp://HOST:PORT, env://, file:///DIRECTORY",
                            init_method));
  }
  world_size = flag_or_variable(world_size, "--distributed-world-size", "WORLD_SIZE", from_environment);
  rank = flag_or_variable(rank, "--distributed-rank", "RANK", from_environment);
  ATTN_CHECK(world_size && rank,
             "--distributed-init-method {} needs --distributed-world-size N (the same on every rank) and "
             "--distributed-rank R (0..N-1, each rank its own){}",
             init_method, from_environment ? ", or WORLD_SIZE and RANK" : "");
  ATTN_CHECK(*rank < *world_size, "--distributed-rank {} is not below --distributed-world-size {}", *rank, *world_size);
  plan.world_size = *world_size;
  plan.rank = *rank;
  return plan;
}

std::unique_ptr<Communicator> meet(const Rendezvous& plan) {
  constexpr auto timeout = GlooCommunicator::kTimeout;
  if (plan.over_tcp) {
    TcpStore store(plan.host, plan.port, plan.rank == 0, timeout);
    // Each rank listens where it reached rank 0's store: an address the others can reach.
    return std::make_unique<GlooCommunicator>(plan.rank, plan.world_size, store, store.local_address());
  }
  std::error_code error;
  std::filesystem::create_directories(plan.directory, error);
  ATTN_CHECK(!error, "--distributed-init-method {}: cannot make the directory: {}", plan.init_method, error.message());
  const bool had_files = !std::filesystem::is_empty(plan.directory, error);  // other ranks', or an earlier job's
  gloo::rendezvous::FileStore store(plan.directory);
  std::unique_ptr<Communicator> world;
  try {
    world = std::make_unique<GlooCommunicator>(plan.rank, plan.world_size, store, "");
  } catch (const Error& e) {
    if (!had_files) throw;
    throw Error(fmt::format("{} (--distributed-init-method {}: were there files of an earlier job in {}? empty it and "
                            "start every rank again)",
                            e.what(), plan.init_method, plan.directory));
  }
  for (const std::string& file : store.getAllKeyFilePaths()) std::filesystem::remove(file, error);
  world->barrier();  // every rank removed its files
  if (plan.rank == 0) std::filesystem::remove(plan.directory, error);  // when empty
  return world;
}

}  // namespace attn::dist
