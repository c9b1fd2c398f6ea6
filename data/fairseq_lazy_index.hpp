// The index (.idx) of fairseq's older binarized formats, `--dataset-impl lazy` and `cached`
// (docs/mt-tools.md §4): the two names are two ways of reading the same files (a sentence at a
// time, or all prefetched), which fairseq-preprocess writes alike, and which fairseq still reads
// when it finds them (it infers "cached" from the magic). PREFIX.bin holds the ids of every
// sentence back to back, each stored plus one (the writer's shift for Lua's 1-based indexing,
// which fairseq's translation reader takes off again), as int32 when fairseq writes them.
// PREFIX.idx, all integers little-endian:
//
//   offset  size      field
//        0     8      magic "TNTIDX\0\0"
//        8     8      uint64 version (1)
//       16     8      uint64 dtype code of the .bin's elements (as the mmap format's)
//       24     8      uint64 element size in bytes
//       32     8      uint64 number of items N
//       40     8      uint64 number of sizes S
//       48     8(N+1) int64 dimension offsets: item i's shape is sizes[dim[i], dim[i+1])
//        .     8(N+1) int64 data offsets: item i is elements [data[i], data[i+1]) of the .bin
//        .     8S     int64 sizes
//
// A sentence is an item of one dimension, so S = N and sizes[i] is sentence i's length.
// read_fairseq_lazy_index validates all of this (each item one-dimensional, not empty, starting
// where the one before ends; the element size the dtype's) and gives the token offsets;
// fairseq_lazy_files writes the two files as fairseq-preprocess does.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/fairseq_mmap_index.hpp"

namespace attn::data {

inline constexpr char kFairseqLazyMagic[8] = {'T', 'N', 'T', 'I', 'D', 'X', '\0', '\0'};
inline constexpr size_t kFairseqLazyHeaderBytes = 48;

// Reads and validates the index at path; every error names the file and what is wrong.
FairseqIndex read_fairseq_lazy_index(const std::string& path);

// The .bin and .idx bytes of the sentences in this format, ids as int32 (fairseq's
// IndexedDatasetBuilder, whatever the dictionary's size).
FairseqFiles fairseq_lazy_files(const std::vector<std::vector<int32_t>>& sentences);

}  // namespace attn::data
