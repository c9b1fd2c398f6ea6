// The sizes of one banded convolution (cuda/kernels/banded_conv.cuh): a plain struct passed
// by value to the kernels, free of the kernel dialect so host code can fill it
// (cuda/cuda_backend.cpp). rows = B·T, channels = C = heads · per_head.
#pragma once
#include "cuda/kernels/host_device.hpp"

namespace attn::cuda_kernels {

struct BandShape {
  long long rows;
  int length, channels, heads, kernel, per_head, padding_left;
  bool shared;  // taps [H, K] for every position, else [B, T, H, K]

  // Offset of the taps of row r (= b·T + t), head h.
  ATTN_HD long long taps(long long r, int h) const { return (shared ? 0 : r * heads * kernel) + (long long)h * kernel; }
  // The taps j of a row at time t that read inside the sentence: t + j − P ∈ [0, T).
  ATTN_HD int first_tap(int t) const { return padding_left - t > 0 ? padding_left - t : 0; }
  ATTN_HD int end_tap(int t) const { return length + padding_left - t < kernel ? length + padding_left - t : kernel; }
};

}  // namespace attn::cuda_kernels
