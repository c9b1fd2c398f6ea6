// The index (.idx) of fairseq's default binarized format, `--dataset-impl mmap`
// (docs/mt-tools.md §4). fairseq-preprocess writes each split and language as two files:
// PREFIX.bin holds every sentence's token ids back to back, in one integer type, and PREFIX.idx
// says where each sentence starts. All integers little-endian:
//
//   offset  size  field
//        0     9  magic "MMIDIDX\0\0"
//        9     8  uint64 version (1)
//       17     1  uint8 dtype code of the ids in the .bin (fairseq_dtype_code_name)
//       18     8  uint64 number of sentences N
//       26   4*N  int32 sentence lengths in tokens (each ≥ 1: every sentence ends with </s>)
//   26+4N    8*N  int64 byte offset of each sentence in the .bin: 0, then the previous
//                 offset plus the previous length times the dtype's size
//
// Nothing follows (no document index) and the .bin is exactly the sum of the lengths times the
// dtype's size. Neither file names the dictionary: the caller checks the ids against the one it
// holds. read_fairseq_mmap_index validates all of the above and turns the lengths into token
// offsets, as attnlab's own format stores them (data/binarized_corpus.hpp);
// fairseq_mmap_files writes the two files as fairseq-preprocess does.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/binarized_corpus.hpp"

namespace attn::data {

inline constexpr char kFairseqMmapMagic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', '\0', '\0'};
inline constexpr size_t kFairseqMmapHeaderBytes = 26;

// PREFIX.idx for PREFIX.bin (a path not ending in .bin gets .idx appended); fairseq's older
// formats name their index the same way (data/fairseq_lazy_index.hpp).
std::string fairseq_index_path(const std::string& bin_path);

// fairseq's dtype codes (indexed_dataset.py's _code_to_dtype, shared by all its index formats)
// of the integer types; none for its float codes 6 and 7 or an unknown one.
std::optional<TokenDtype> fairseq_dtype_of_code(uint64_t code);
uint8_t fairseq_dtype_code(TokenDtype dtype);

// What an index of either fairseq format says about its .bin.
struct FairseqIndex {
  TokenDtype dtype = TokenDtype::kUInt16;
  // Sentence i is tokens [offsets[i], offsets[i+1]) of the .bin; offsets.back() is the total.
  std::vector<uint64_t> offsets{0};
  // The .bin holds each id plus this: 1 in the lazy/cached format, 0 in this one.
  int64_t stored_id_shift = 0;
};

// Reads and validates the index at path; every error names the file and what is wrong.
FairseqIndex read_fairseq_mmap_index(const std::string& path);

// The start both index formats share, checked in `bytes` (the index at path): at least
// `header_bytes`, the format's magic, then version 1 as a uint64.
void check_fairseq_index_start(const std::string& path, const std::string& bytes, std::string_view magic,
                               size_t header_bytes, const char* format);
// The token type of dtype `code`; an error naming the index at path for a float or unknown code.
TokenDtype fairseq_index_dtype(const std::string& path, uint64_t code);

// The id type fairseq-preprocess writes for a dictionary of that many entries
// (best_fitting_int_dtype): uint16 below 65,500, uint32 below 2^32 - 1, else int64.
TokenDtype fairseq_token_dtype_for(size_t dictionary_size);

// The .bin (data) and .idx (index) bytes of a split in one of fairseq's formats.
struct FairseqFiles {
  std::string data, index;
};
// The sentences, whose ids are below dictionary_size, in this format.
FairseqFiles fairseq_mmap_files(const std::vector<std::vector<int32_t>>& sentences, size_t dictionary_size);

}  // namespace attn::data
