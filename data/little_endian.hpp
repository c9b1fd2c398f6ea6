// Reading and writing the fixed-size little-endian integers of the binarized formats
// (attnlab's, data/binarized_corpus.hpp, and fairseq's, data/fairseq_mmap_index.hpp) on a
// little-endian machine, at any alignment.
#pragma once
#include <bit>
#include <cstring>
#include <string>

namespace attn::data {

static_assert(std::endian::native == std::endian::little, "the binarized formats are little-endian");

// The T stored at bytes.
template <typename T>
T load_little_endian(const void* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

// value's bytes appended to out.
template <typename T>
void append_little_endian(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

}  // namespace attn::data
