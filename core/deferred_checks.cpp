// See deferred_checks.hpp.
#include "core/deferred_checks.hpp"

#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace attn {
namespace {

struct PendingCheck {
  Tensor failed;
  std::function<std::string(double)> message;
};

struct Pending {
  std::mutex mutex;
  std::vector<PendingCheck> checks;
};

Pending& pending() {
  static Pending p;
  return p;
}

}  // namespace

void defer_check(const Tensor& failed, std::function<std::string(double)> message) {
  ATTN_CHECK(failed.defined() && failed.numel() == 1, "defer_check: the flag must hold one value");
  std::lock_guard lock(pending().mutex);
  pending().checks.push_back({failed, std::move(message)});
}

void run_deferred_checks() {
  std::vector<PendingCheck> checks;
  {
    std::lock_guard lock(pending().mutex);
    checks.swap(pending().checks);  // taken first: reading a flag is itself a copy to the host
  }
  std::optional<std::string> first_failure;
  for (const PendingCheck& check : checks) {
    const double value = check.failed.item();
    if (value != 0.0 && !first_failure) first_failure = check.message(value);
  }
  if (first_failure) throw Error(*first_failure);
}

}  // namespace attn
