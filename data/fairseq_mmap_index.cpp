#include "data/fairseq_mmap_index.hpp"

#include <cstring>
#include <optional>
#include <utility>

#include <fmt/core.h>

#include "data/little_endian.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

// fairseq's dtype codes (indexed_dataset.py, _code_to_dtype) of the integer types; 6 and 7 are
// its float types, never token ids.
constexpr std::pair<uint8_t, TokenDtype> kDtypeCodes[] = {
    {1, TokenDtype::kUInt8},  {2, TokenDtype::kInt8},   {3, TokenDtype::kInt16},  {4, TokenDtype::kInt32},
    {5, TokenDtype::kInt64},  {8, TokenDtype::kUInt16}, {9, TokenDtype::kUInt32}, {10, TokenDtype::kUInt64}};

// Turns the lengths and byte offsets into token offsets, checking that each sentence starts
// where the one before ends (so sentences neither overlap nor leave gaps in the .bin).
std::vector<uint64_t> token_offsets(const std::string& path, const char* lengths, const char* pointers,
                                    uint64_t count, uint64_t item_bytes) {
  std::vector<uint64_t> offsets(count + 1, 0);
  for (uint64_t i = 0; i < count; ++i) {
    const auto length = load_little_endian<int32_t>(lengths + 4 * i);
    const auto pointer = load_little_endian<int64_t>(pointers + 8 * i);
    if (length < 1)
      throw DataError(fmt::format("{}: sentence {} has length {} (every sentence holds at least its </s>)", path, i,
                                  length));
    // Compared in tokens, not bytes, so that no product can overflow.
    if (pointer < 0 || uint64_t(pointer) % item_bytes != 0 || uint64_t(pointer) / item_bytes != offsets[i])
      throw DataError(fmt::format("{}: corrupt index: sentence {} starts at byte {} of the .bin, expected {} (the "
                                  "end of the sentences before it)",
                                  path, i, pointer, offsets[i] * item_bytes));
    if (__builtin_add_overflow(offsets[i], uint64_t(length), &offsets[i + 1]))
      throw DataError(fmt::format("{}: corrupt index: the lengths add up past 2^64 tokens", path));
  }
  return offsets;
}

}  // namespace

std::string fairseq_index_path(const std::string& bin_path) {
  const bool has_bin = bin_path.size() >= 4 && bin_path.compare(bin_path.size() - 4, 4, ".bin") == 0;
  return (has_bin ? bin_path.substr(0, bin_path.size() - 4) : bin_path) + ".idx";
}

std::optional<TokenDtype> fairseq_dtype_of_code(uint64_t code) {
  for (const auto& [known, dtype] : kDtypeCodes)
    if (known == code) return dtype;
  return std::nullopt;
}

uint8_t fairseq_dtype_code(TokenDtype dtype) {
  for (const auto& [code, known] : kDtypeCodes)
    if (known == dtype) return code;
  throw DataError("no fairseq dtype code for this token type");  // unreachable: every type is listed
}

void check_fairseq_index_start(const std::string& path, const std::string& bytes, std::string_view magic,
                               size_t header_bytes, const char* format) {
  if (bytes.size() < header_bytes)
    throw DataError(fmt::format("{}: truncated fairseq index ({} bytes, shorter than the {}-byte header)", path,
                                bytes.size(), header_bytes));
  if (std::memcmp(bytes.data(), magic.data(), magic.size()) != 0)
    throw DataError(fmt::format("{}: not a fairseq {} index (bad magic)", path, format));
  const auto version = load_little_endian<uint64_t>(bytes.data() + magic.size());
  if (version != 1)
    throw DataError(fmt::format("{}: unsupported fairseq index version {} (expected 1)", path, version));
}

TokenDtype fairseq_index_dtype(const std::string& path, uint64_t code) {
  const std::optional<TokenDtype> dtype = fairseq_dtype_of_code(code);
  if (!dtype)
    throw DataError(fmt::format("{}: dtype code {} is not an integer type fairseq writes token ids in ({})", path,
                                code, code == 6 || code == 7 ? "float64" : "unknown code"));
  return *dtype;
}

FairseqIndex read_fairseq_mmap_index(const std::string& path) {
  const std::string bytes = read_file_bytes(path);
  check_fairseq_index_start(path, bytes, std::string_view(kFairseqMmapMagic, sizeof kFairseqMmapMagic),
                            kFairseqMmapHeaderBytes, "mmap");
  const TokenDtype dtype = fairseq_index_dtype(path, load_little_endian<uint8_t>(bytes.data() + 17));
  const auto count = load_little_endian<uint64_t>(bytes.data() + 18);
  // 12 bytes per sentence; a count this large cannot match any file and would overflow.
  const uint64_t available = bytes.size() - kFairseqMmapHeaderBytes;
  if (count > available / 12 || available != 12 * count)
    throw DataError(fmt::format("{}: corrupt or truncated fairseq index: {} sentences need {} bytes after the "
                                "header, the file has {}",
                                path, count, count > available / 12 ? "more" : fmt::format("{}", 12 * count),
                                available));
  const char* lengths = bytes.data() + kFairseqMmapHeaderBytes;
  FairseqIndex index;
  index.dtype = dtype;
  index.offsets = token_offsets(path, lengths, lengths + 4 * count, count, token_dtype_bytes(dtype));
  return index;
}

TokenDtype fairseq_token_dtype_for(size_t dictionary_size) {
  if (dictionary_size < 65500) return TokenDtype::kUInt16;
  if (dictionary_size < 4294967295) return TokenDtype::kUInt32;
  return TokenDtype::kInt64;
}

FairseqFiles fairseq_mmap_files(const std::vector<std::vector<int32_t>>& sentences, size_t dictionary_size) {
  const TokenDtype dtype = fairseq_token_dtype_for(dictionary_size);
  FairseqFiles files;
  files.index.assign(kFairseqMmapMagic, sizeof kFairseqMmapMagic);
  append_little_endian(files.index, uint64_t{1});
  append_little_endian(files.index, fairseq_dtype_code(dtype));
  append_little_endian(files.index, uint64_t(sentences.size()));
  for (const auto& sentence : sentences) append_little_endian(files.index, int32_t(sentence.size()));
  int64_t pointer = 0;
  for (const auto& sentence : sentences) {
    append_little_endian(files.index, pointer);
    pointer += int64_t(sentence.size() * token_dtype_bytes(dtype));
  }
  files.data.reserve(size_t(pointer));
  for (const auto& sentence : sentences)
    for (const int32_t id : sentence) {
      if (dtype == TokenDtype::kUInt16) append_little_endian(files.data, uint16_t(id));
      else if (dtype == TokenDtype::kUInt32) append_little_endian(files.data, uint32_t(id));
      else append_little_endian(files.data, int64_t(id));
    }
  return files;
}

}  // namespace attn::data
