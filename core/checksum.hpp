#pragma once
// FNV-1a 64-bit hash: one cheap pass over the bytes in which any flipped bit changes the
// result. Binarized corpora and checkpoints record it to detect torn or modified files.
#include <cstddef>
#include <cstdint>

namespace attn {

inline constexpr uint64_t kFnv1a64OffsetBasis = 0xcbf29ce484222325ull;

// Continues `hash` over `n` more bytes (start from kFnv1a64OffsetBasis).
inline uint64_t fnv1a64(uint64_t hash, const void* data, size_t n) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

inline uint64_t fnv1a64(const void* data, size_t n) { return fnv1a64(kFnv1a64OffsetBasis, data, n); }

}  // namespace attn
