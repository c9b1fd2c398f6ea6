// Binarized, memory-mapped corpus: one file per split and language holding every sentence's
// token ids (including the final </s>), as fairseq-preprocess writes them (docs/mt-tools.md §4)
// but in attnlab's own single-file layout. All integers little-endian:
//
//   offset  size  field
//        0     8  magic "ATNLBIN\0"
//        8     4  uint32 format version (3)
//       12     4  uint32 token dtype: 1 = uint16, 2 = int32
//       16     8  uint64 number of sentences N
//       24     8  uint64 number of tokens T
//       32     8  uint64 dictionary size V (every token id is < V)
//       40     8  uint64 checksum: FNV-1a 64 of every byte after this field
//       48     8  uint64 the dictionary's fingerprint (Dictionary::fingerprint)
//       56  8(N+1) uint64 offsets: sentence i is tokens [offsets[i], offsets[i+1]),
//                 offsets[0] = 0, offsets[N] = T, increasing (no sentence is empty: each
//                 ends with </s>)
//        .  T*s   token ids (s = 2 or 4 bytes)
//
// uint16 is used when V <= 65535, else int32. Opening validates the magic, version, dtype,
// the exact file size implied by the header, the offsets, every token id and the checksum
// before any sentence is read, so a truncated, foreign or bit-flipped file gives a clear
// error and never a crash or silently wrong ids. The fingerprint lets a reader check that
// the dictionary it holds is the one the ids were made with, not merely one of the same size
// (apps/task/translation_task.cpp). Version 2 files (the same without the fingerprint, whose
// offsets start at byte 48) are still read; version 1 files (no checksum) are refused with
// the advice to run preprocess again.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/dictionary.hpp"
#include "data/text_io.hpp"

namespace attn::data {

struct FairseqIndex;  // data/fairseq_mmap_index.hpp

// The type of the ids in a file. kUInt16 and kInt32 are attnlab's (their values are the codes
// in its header); fairseq's files may hold the others too.
enum class TokenDtype : uint32_t { kUInt16 = 1, kInt32 = 2, kUInt8 = 101, kInt8, kInt16, kInt64, kUInt32, kUInt64 };

size_t token_dtype_bytes(TokenDtype dtype);

// kFairseqMmap: fairseq's default --dataset-impl mmap (data/fairseq_mmap_index.hpp);
// kFairseqLazy: its older lazy and cached, one format (data/fairseq_lazy_index.hpp);
// kRawText: its raw, the text itself (DIR/SPLIT.SRC-TGT.LANG, no extension), encoded with the
// dictionary when opened.
enum class BinarizedFormat { kAttnlab, kFairseqMmap, kFairseqLazy, kRawText };

inline constexpr char kBinarizedMagic[8] = {'A', 'T', 'N', 'L', 'B', 'I', 'N', '\0'};
inline constexpr uint32_t kBinarizedVersion = 3;
inline constexpr size_t kBinarizedHeaderBytes = 56;
inline constexpr size_t kBinarizedChecksummedFrom = 48;  // the checksum covers the bytes from here on

// File name of one split/language, as fairseq names them: DIR/SPLIT.SRC-TGT.LANG.bin
std::string binarized_path(const std::string& dir, const std::string& split, const std::string& source_lang,
                           const std::string& target_lang, const std::string& lang);

// The text file of one split/language in fairseq's raw format: DIR/SPLIT.SRC-TGT.LANG
std::string raw_text_path(const std::string& dir, const std::string& split, const std::string& source_lang,
                          const std::string& target_lang, const std::string& lang);
// The smallest dtype holding ids < dictionary_size.
TokenDtype token_dtype_for(size_t dictionary_size);

// The binarized file of sentences (each a list of ids of `dictionary`; errors name `path`).
std::string binarized_corpus_bytes(const std::string& path, const std::vector<std::vector<int32_t>>& sentences,
                                   const Dictionary& dictionary);
// Writes them atomically to path.
void write_binarized_corpus(const std::string& path, const std::vector<std::vector<int32_t>>& sentences,
                            const Dictionary& dictionary);

struct BinarizeStats {
  size_t sentences = 0, tokens = 0;  // tokens include one </s> per sentence
  int64_t unknown_tokens = 0;        // words replaced by <unk>
};

// Encodes every line of text_path with the dictionary (ids + </s>, fairseq encode_line)
// and writes the binarized file to out_path; `workers` threads encode in parallel.
BinarizeStats binarize_text_file(const std::string& text_path, const Dictionary& dictionary,
                                 const std::string& out_path, int workers = 1);
// The same for lines already read, the file staged in `outputs` (written at its commit): in
// attnlab's format, or in one of fairseq's (out_path and its .idx).
BinarizeStats binarize_lines(const std::vector<std::string>& lines, const Dictionary& dictionary,
                             const std::string& out_path, OutputFiles& outputs, int workers = 1,
                             BinarizedFormat format = BinarizedFormat::kAttnlab);
// fairseq-preprocess's report line: "[en] valid: 1000 sents, 25000 tokens, 0.5% replaced by <unk>"
// (the percentage formatted as Python's "{:.3}").
std::string binarize_report(const std::string& lang, const std::string& split, const BinarizeStats& stats);

// Read-only view of a binarized corpus file (memory-mapped; movable, not copyable).
class BinarizedCorpus {
 public:
  // Reads attnlab's format, or fairseq's mmap or lazy/cached when path has no attnlab magic and
  // path's .idx has that format's; errors name the file and what is wrong.
  static BinarizedCorpus open(const std::string& path);
  // fairseq's raw dataset: every line of the text file at `path` (checked for UTF-8, errors
  // naming the line) encoded with `dictionary` (whitespace-separated symbols, unknown ones
  // <unk>, </s> appended, as fairseq's IndexedRawTextDataset), held in memory with the lines.
  static BinarizedCorpus from_text(const std::string& path, const Dictionary& dictionary);
  BinarizedCorpus(BinarizedCorpus&& other) noexcept;
  BinarizedCorpus& operator=(BinarizedCorpus&& other) noexcept;
  BinarizedCorpus(const BinarizedCorpus&) = delete;
  BinarizedCorpus& operator=(const BinarizedCorpus&) = delete;
  ~BinarizedCorpus();

  const std::string& path() const { return path_; }
  size_t size() const { return num_sentences_; }  // number of sentences
  size_t num_tokens() const { return num_tokens_; }
  BinarizedFormat format() const { return format_; }
  // The size of the dictionary the ids were made with (every id is below it); none in a
  // fairseq file.
  std::optional<size_t> dictionary_size() const { return dictionary_size_; }
  // The largest id in the file; -1 when it holds no token.
  int64_t max_id() const { return max_id_; }
  TokenDtype dtype() const { return dtype_; }
  // The fingerprint of the dictionary the ids were made with; none in a version 2 file.
  std::optional<uint64_t> dictionary_fingerprint() const { return dictionary_fingerprint_; }

  // Number of tokens of sentence i (including its </s>).
  size_t length(size_t i) const;
  // Token ids of sentence i copied into out (out.size() must equal length(i)).
  void read_sentence(size_t i, std::span<int64_t> out) const;
  std::vector<int64_t> sentence(size_t i) const;
  // Every sentence, in order.
  std::vector<std::vector<int64_t>> sentences() const;
  // Sentence i's line of text, for a corpus read from_text (fairseq's get_original_text); none
  // for a binarized file, which keeps only the ids.
  std::optional<std::string_view> original_text(size_t i) const;

 private:
  BinarizedCorpus() = default;
  void map_file();
  void open_attnlab();
  void open_fairseq(FairseqIndex index);
  void validate_contents() const;
  void check_token_ids(std::optional<size_t> limit);
  int64_t token(size_t position) const;         // the id
  int64_t stored_value(size_t position) const;  // as the file holds it
  void release();

  std::string path_;
  const unsigned char* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  TokenDtype dtype_ = TokenDtype::kInt32;
  int64_t stored_id_shift_ = 0;  // the file holds each id plus this (FairseqIndex::stored_id_shift)
  BinarizedFormat format_ = BinarizedFormat::kAttnlab;
  size_t num_sentences_ = 0, num_tokens_ = 0;
  std::optional<size_t> dictionary_size_;
  int64_t max_id_ = -1;
  std::optional<uint64_t> dictionary_fingerprint_;
  const unsigned char* offsets_ = nullptr;  // (N+1) little-endian uint64: in the mapping, or fairseq_offsets_
  std::vector<uint64_t> fairseq_offsets_;   // a fairseq file's, built from its index
  const unsigned char* tokens_ = nullptr;
  std::vector<unsigned char> in_memory_;  // from_text: the bytes mapping_ points into (nothing mapped)
  std::vector<std::string> lines_;        // from_text: the lines of the text
};

}  // namespace attn::data
