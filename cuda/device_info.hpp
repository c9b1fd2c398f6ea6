// CUDA device discovery (compiled only with the CUDA backend: ATTNLAB_WITH_CUDA).
#pragma once
#include <string>

namespace attn::cuda {

int device_count();
std::string device_name(int index);

}  // namespace attn::cuda
