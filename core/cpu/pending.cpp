// Temporary: CPU kernels not written yet. Each throws until its real file lands.
#include "core/cpu/cpu_backend.hpp"

namespace attn::cpu {

namespace {
[[noreturn]] void not_implemented(const char* kernel) { throw Error(fmt::format("{}: not implemented", kernel)); }
}  // namespace

void CpuBackend::index_select_rows(const Tensor&, const Tensor&, const Tensor&) { not_implemented("index_select_rows"); }
void CpuBackend::index_add_rows(const Tensor&, const Tensor&, const Tensor&) { not_implemented("index_add_rows"); }
void CpuBackend::topk(const Tensor&, int64_t, bool, const Tensor&, const Tensor&) { not_implemented("topk"); }
void CpuBackend::gather_last(const Tensor&, const Tensor&, const Tensor&) { not_implemented("gather_last"); }

}  // namespace attn::cpu
