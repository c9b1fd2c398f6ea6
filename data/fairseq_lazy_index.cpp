#include "data/fairseq_lazy_index.hpp"

#include <fmt/core.h>

#include "data/little_endian.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

constexpr size_t kCountsOffset = 32;

// The int64 at index i of the array starting at `array`.
int64_t element(const char* array, uint64_t i) {
  return load_little_endian<int64_t>(array + 8 * i);
}

// Checks that every item is one sentence (one dimension, at least its </s>, starting where the
// one before ends) and returns its token offsets.
std::vector<uint64_t> token_offsets(const std::string& path, const char* dimensions, const char* data,
                                    const char* sizes, uint64_t count) {
  if (element(dimensions, 0) != 0 || element(data, 0) != 0)
    throw DataError(fmt::format("{}: corrupt index: the first item does not start at offset 0", path));
  std::vector<uint64_t> offsets(count + 1, 0);
  for (uint64_t i = 0; i < count; ++i) {
    if (element(dimensions, i + 1) != int64_t(i + 1))
      throw DataError(fmt::format("{}: item {} is not a sentence: it has {} dimensions (a sentence has 1)", path, i,
                                  element(dimensions, i + 1) - element(dimensions, i)));
    const int64_t length = element(sizes, i);
    if (length < 1)
      throw DataError(
          fmt::format("{}: sentence {} has length {} (every sentence holds at least its </s>)", path, i, length));
    if (element(data, i) != int64_t(offsets[i]) ||
        __builtin_add_overflow(offsets[i], uint64_t(length), &offsets[i + 1]) ||
        element(data, i + 1) != int64_t(offsets[i + 1]))
      throw DataError(
          fmt::format("{}: corrupt index: sentence {} spans elements {} to {} of the .bin, but its "
                      "length is {}",
                      path, i, element(data, i), element(data, i + 1), length));
  }
  return offsets;
}

}  // namespace

FairseqIndex read_fairseq_lazy_index(const std::string& path) {
  const std::string bytes = read_file_bytes(path);
  check_fairseq_index_start(path, bytes, std::string_view(kFairseqLazyMagic, sizeof kFairseqLazyMagic),
                            kFairseqLazyHeaderBytes, "lazy/cached");
  const auto code = load_little_endian<uint64_t>(bytes.data() + 16);
  const TokenDtype dtype = fairseq_index_dtype(path, code);
  const auto element_size = load_little_endian<uint64_t>(bytes.data() + 24);
  if (element_size != token_dtype_bytes(dtype))
    throw DataError(fmt::format("{}: element size {} does not match dtype code {} ({} bytes)", path, element_size, code,
                                token_dtype_bytes(dtype)));
  const auto count = load_little_endian<uint64_t>(bytes.data() + kCountsOffset);
  const auto sizes = load_little_endian<uint64_t>(bytes.data() + kCountsOffset + 8);
  // Two offset arrays of count + 1 and the sizes, 8 bytes each; counts this large cannot match
  // any file and would overflow.
  const uint64_t words = (bytes.size() - kFairseqLazyHeaderBytes) / 8;
  if (count >= words / 2 || sizes > words || bytes.size() != kFairseqLazyHeaderBytes + 8 * (2 * (count + 1) + sizes))
    throw DataError(
        fmt::format("{}: corrupt or truncated fairseq index: {} items and {} sizes do not fill its {} "
                    "bytes",
                    path, count, sizes, bytes.size()));
  if (sizes != count)
    throw DataError(
        fmt::format("{}: {} sizes for {} items: its items are not all sentences (one size each)", path, sizes, count));
  const char* dimensions = bytes.data() + kFairseqLazyHeaderBytes;
  const char* data = dimensions + 8 * (count + 1);
  FairseqIndex index;
  index.dtype = dtype;
  index.offsets = token_offsets(path, dimensions, data, data + 8 * (count + 1), count);
  index.stored_id_shift = 1;
  return index;
}

FairseqFiles fairseq_lazy_files(const std::vector<std::vector<int32_t>>& sentences) {
  const TokenDtype dtype = TokenDtype::kInt32;
  FairseqFiles files;
  files.index.assign(kFairseqLazyMagic, sizeof kFairseqLazyMagic);
  append_little_endian(files.index, uint64_t{1});
  append_little_endian(files.index, uint64_t(fairseq_dtype_code(dtype)));
  append_little_endian(files.index, uint64_t(token_dtype_bytes(dtype)));
  append_little_endian(files.index, uint64_t(sentences.size()));
  append_little_endian(files.index, uint64_t(sentences.size()));
  for (size_t i = 0; i <= sentences.size(); ++i) append_little_endian(files.index, int64_t(i));
  int64_t offset = 0;
  append_little_endian(files.index, offset);
  for (const auto& sentence : sentences) append_little_endian(files.index, offset += int64_t(sentence.size()));
  for (const auto& sentence : sentences) append_little_endian(files.index, int64_t(sentence.size()));
  files.data.reserve(size_t(offset) * token_dtype_bytes(dtype));
  for (const auto& sentence : sentences)
    for (const int32_t id : sentence) append_little_endian(files.data, int32_t(id + 1));
  return files;
}

}  // namespace attn::data
