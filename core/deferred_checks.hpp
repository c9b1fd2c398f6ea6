// Checks of values on a device whose answer the host does not wait for. Reading a device
// value back makes the host wait for every kernel queued before it; an op that must refuse
// bad input held on a device (an embedding's token ids) instead computes a flag on the
// device, defers its check here, and lets its kernel stay in bounds on bad input. The checks
// run at the next point where the host reads device memory anyway (a copy to the host:
// the loss, search results, a checkpoint), before that value is used, so bad input still
// ends in an error naming the op and the problem, one sync later than on the CPU.
#pragma once
#include <functional>
#include <string>

#include "core/tensor.hpp"

namespace attn {

// `failed` holds one number on a device, nonzero when the check failed; `message` builds the
// error from its value then.
void defer_check(const Tensor& failed, std::function<std::string(double failed)> message);
// Reads every pending flag and throws attn::Error with the first failure's message (all
// pending checks are consumed either way). Called by copies from a device to the host.
void run_deferred_checks();

}  // namespace attn
