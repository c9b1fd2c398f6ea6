// FNV-1a, 64 bits: the checksum of checkpoint files and binarized corpora. Not cryptographic:
// it catches truncation, torn writes and flipped bits, not deliberate forgery.
#pragma once
#include <cstddef>
#include <cstdint>

namespace attn {

inline constexpr uint64_t kFnv1a64Start = 0xcbf29ce484222325ull;

// The hash after `n` more bytes, continuing from `hash` (kFnv1a64Start for a fresh one).
inline uint64_t fnv1a64(const void* bytes, size_t n, uint64_t hash = kFnv1a64Start) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < n; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  return hash;
}

}  // namespace attn
