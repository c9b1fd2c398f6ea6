#include "data/binarized_corpus.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

#include <fmt/core.h>

#include "core/checksum.hpp"
#include "data/fairseq_lazy_index.hpp"
#include "data/fairseq_mmap_index.hpp"
#include "data/little_endian.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

constexpr size_t kChecksumOffset = 40, kFingerprintOffset = 48;
constexpr uint32_t kVersionWithoutFingerprint = 2;

// The header's bytes in a file of `version` (2 or 3): version 2 has no fingerprint.
size_t header_bytes(uint32_t version) {
  return version == kVersionWithoutFingerprint ? kFingerprintOffset : kBinarizedHeaderBytes;
}

// header + offsets + tokens, or 0 on overflow.
size_t expected_file_bytes(size_t header, uint64_t num_sentences, uint64_t num_tokens, TokenDtype dtype) {
  uint64_t offset_bytes, token_bytes, total;
  if (__builtin_mul_overflow(num_sentences + 1, uint64_t{8}, &offset_bytes) || num_sentences == UINT64_MAX ||
      __builtin_mul_overflow(num_tokens, uint64_t(token_dtype_bytes(dtype)), &token_bytes) ||
      __builtin_add_overflow(offset_bytes, token_bytes, &total) ||
      __builtin_add_overflow(total, uint64_t{header}, &total))
    return 0;
  return total;
}

// Python's format(value, ".3"): 3 significant digits, scientific when the decimal exponent
// is < -4 or >= 2, and at least one digit after the point in fixed notation.
std::string python_three_significant(double value) {
  std::string scientific = fmt::format("{:.2e}", value);  // d.dde±XX, rounded like Python
  size_t e = scientific.find('e');
  int exponent = std::stoi(scientific.substr(e + 1));
  auto strip_zeros = [](std::string digits, bool keep_one_decimal) {
    if (digits.find('.') == std::string::npos) return keep_one_decimal ? digits + ".0" : digits;
    digits.erase(digits.find_last_not_of('0') + 1);
    if (digits.back() == '.') keep_one_decimal ? digits.push_back('0') : digits.pop_back();
    return digits;
  };
  if (value != 0 && (exponent < -4 || exponent >= 2))
    return fmt::format("{}e{}{:02d}", strip_zeros(scientific.substr(0, e), false), exponent < 0 ? '-' : '+',
                       std::abs(exponent));
  return strip_zeros(fmt::format("{:.{}f}", value, std::max(0, 2 - exponent)), true);
}

// Which of fairseq's formats the index at path is, by its magic; none when there is no such
// file or it has neither magic.
std::optional<BinarizedFormat> fairseq_index_format(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof kFairseqMmapMagic] = {};
  in.read(magic, sizeof magic);
  if (std::memcmp(magic, kFairseqMmapMagic, sizeof kFairseqMmapMagic) == 0) return BinarizedFormat::kFairseqMmap;
  if (std::memcmp(magic, kFairseqLazyMagic, sizeof kFairseqLazyMagic) == 0) return BinarizedFormat::kFairseqLazy;
  return std::nullopt;
}

}  // namespace

size_t token_dtype_bytes(TokenDtype dtype) {
  switch (dtype) {
    case TokenDtype::kUInt8:
    case TokenDtype::kInt8: return 1;
    case TokenDtype::kUInt16:
    case TokenDtype::kInt16: return 2;
    case TokenDtype::kInt32:
    case TokenDtype::kUInt32: return 4;
    case TokenDtype::kInt64:
    case TokenDtype::kUInt64: return 8;
  }
  return 4;  // unreachable: every dtype is listed
}

std::string binarized_path(const std::string& dir, const std::string& split, const std::string& source_lang,
                           const std::string& target_lang, const std::string& lang) {
  return fmt::format("{}/{}.{}-{}.{}.bin", dir, split, source_lang, target_lang, lang);
}

std::string raw_text_path(const std::string& dir, const std::string& split, const std::string& source_lang,
                          const std::string& target_lang, const std::string& lang) {
  return fmt::format("{}/{}.{}-{}.{}", dir, split, source_lang, target_lang, lang);
}

TokenDtype token_dtype_for(size_t dictionary_size) {
  return dictionary_size <= 65535 ? TokenDtype::kUInt16 : TokenDtype::kInt32;
}

std::string binarized_corpus_bytes(const std::string& path, const std::vector<std::vector<int32_t>>& sentences,
                                   const Dictionary& dictionary) {
  const size_t dictionary_size = dictionary.size();
  TokenDtype dtype = token_dtype_for(dictionary_size);
  uint64_t num_tokens = 0;
  for (const auto& sentence : sentences) num_tokens += sentence.size();
  std::string bytes(kBinarizedMagic, sizeof kBinarizedMagic);
  bytes.reserve(expected_file_bytes(kBinarizedHeaderBytes, sentences.size(), num_tokens, dtype));
  append_little_endian(bytes, kBinarizedVersion);
  append_little_endian(bytes, static_cast<uint32_t>(dtype));
  append_little_endian(bytes, uint64_t(sentences.size()));
  append_little_endian(bytes, num_tokens);
  append_little_endian(bytes, uint64_t(dictionary_size));
  append_little_endian(bytes, uint64_t{0});  // the checksum, filled in once the data is there
  append_little_endian(bytes, dictionary.fingerprint());
  uint64_t offset = 0;
  append_little_endian(bytes, offset);
  for (const auto& sentence : sentences) append_little_endian(bytes, offset += sentence.size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    for (int32_t id : sentences[i]) {
      if (id < 0 || size_t(id) >= dictionary_size)
        throw DataError(fmt::format("{}: sentence {} has id {} outside the dictionary (size {})", path, i, id,
                                    dictionary_size));
      if (dtype == TokenDtype::kUInt16) append_little_endian(bytes, static_cast<uint16_t>(id));
      else append_little_endian(bytes, id);
    }
  }
  const uint64_t checksum =
      fnv1a64(bytes.data() + kBinarizedChecksummedFrom, bytes.size() - kBinarizedChecksummedFrom);
  bytes.replace(kChecksumOffset, sizeof checksum, reinterpret_cast<const char*>(&checksum), sizeof checksum);
  return bytes;
}

void write_binarized_corpus(const std::string& path, const std::vector<std::vector<int32_t>>& sentences,
                            const Dictionary& dictionary) {
  write_file_atomic(path, binarized_corpus_bytes(path, sentences, dictionary));
}

BinarizeStats binarize_text_file(const std::string& text_path, const Dictionary& dictionary,
                                 const std::string& out_path, int workers) {
  OutputFiles output;
  const BinarizeStats stats = binarize_lines(read_lines(text_path), dictionary, out_path, output, workers);
  output.commit();
  return stats;
}

BinarizeStats binarize_lines(const std::vector<std::string>& lines, const Dictionary& dictionary,
                             const std::string& out_path, OutputFiles& outputs, int workers,
                             BinarizedFormat format) {
  std::vector<std::vector<int32_t>> sentences(lines.size());
  std::vector<int64_t> unknown(lines.size());
#pragma omp parallel for schedule(static) num_threads(std::max(workers, 1))
  for (size_t i = 0; i < lines.size(); ++i) {
    EncodedLine encoded = dictionary.encode_line(lines[i]);
    sentences[i] = std::move(encoded.ids);
    unknown[i] = encoded.unknown_tokens;
  }
  BinarizeStats stats;
  stats.sentences = sentences.size();
  for (size_t i = 0; i < sentences.size(); ++i) {
    stats.tokens += sentences[i].size();
    stats.unknown_tokens += unknown[i];
  }
  if (format == BinarizedFormat::kFairseqMmap || format == BinarizedFormat::kFairseqLazy) {
    const FairseqFiles files = format == BinarizedFormat::kFairseqMmap
                                   ? fairseq_mmap_files(sentences, dictionary.size())
                                   : fairseq_lazy_files(sentences);
    outputs.add(out_path, files.data);
    outputs.add(fairseq_index_path(out_path), files.index);
  } else {
    outputs.add(out_path, binarized_corpus_bytes(out_path, sentences, dictionary));
  }
  return stats;
}

std::string binarize_report(const std::string& lang, const std::string& split, const BinarizeStats& stats) {
  double percent = stats.tokens ? 100.0 * double(stats.unknown_tokens) / double(stats.tokens) : 0.0;
  return fmt::format("[{}] {}: {} sents, {} tokens, {}% replaced by <unk>", lang, split, stats.sentences,
                     stats.tokens, python_three_significant(percent));
}

BinarizedCorpus BinarizedCorpus::open(const std::string& path) {
  BinarizedCorpus corpus;
  corpus.path_ = path;
  corpus.map_file();
  const bool attnlab_magic = corpus.mapping_bytes_ >= sizeof kBinarizedMagic &&
                             std::memcmp(corpus.mapping_, kBinarizedMagic, sizeof kBinarizedMagic) == 0;
  // attnlab's magic wins over an .idx beside the file (one left from an earlier fairseq run).
  const std::string index_path = fairseq_index_path(path);
  const std::optional<BinarizedFormat> fairseq_format = attnlab_magic ? std::nullopt : fairseq_index_format(index_path);
  if (fairseq_format == BinarizedFormat::kFairseqMmap)
    corpus.open_fairseq(read_fairseq_mmap_index(index_path));
  else if (fairseq_format == BinarizedFormat::kFairseqLazy)
    corpus.open_fairseq(read_fairseq_lazy_index(index_path));
  else corpus.open_attnlab();
  if (fairseq_format) corpus.format_ = *fairseq_format;
  return corpus;
}

BinarizedCorpus BinarizedCorpus::from_text(const std::string& path, const Dictionary& dictionary) {
  BinarizedCorpus corpus;
  corpus.path_ = path;
  corpus.lines_ = read_lines(path);
  std::vector<std::vector<int32_t>> sentences;
  sentences.reserve(corpus.lines_.size());
  for (const std::string& line : corpus.lines_) sentences.push_back(dictionary.encode_line(line).ids);
  const std::string bytes = binarized_corpus_bytes(path, sentences, dictionary);
  corpus.in_memory_.assign(bytes.begin(), bytes.end());
  corpus.mapping_ = corpus.in_memory_.data();
  corpus.mapping_bytes_ = corpus.in_memory_.size();
  corpus.open_attnlab();  // the same checks as a file's
  corpus.format_ = BinarizedFormat::kRawText;
  return corpus;
}

std::optional<std::string_view> BinarizedCorpus::original_text(size_t i) const {
  if (format_ != BinarizedFormat::kRawText) return std::nullopt;
  if (i >= lines_.size()) throw DataError(fmt::format("{}: no sentence {} (it has {})", path_, i, lines_.size()));
  return lines_[i];
}

// Maps the whole file (nothing for an empty one, which mmap refuses).
void BinarizedCorpus::map_file() {
  int fd = ::open(path_.c_str(), O_RDONLY);
  if (fd < 0) throw DataError(fmt::format("{}: cannot open: {}", path_, std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    throw DataError(fmt::format("{}: cannot stat: {}", path_, std::strerror(errno)));
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    throw DataError(fmt::format("{}: is a folder, not a file", path_));
  }
  const auto file_bytes = size_t(info.st_size);
  if (file_bytes == 0) {
    ::close(fd);
    return;
  }
  void* mapping = ::mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping == MAP_FAILED) throw DataError(fmt::format("{}: mmap failed: {}", path_, std::strerror(errno)));
  mapping_ = static_cast<const unsigned char*>(mapping);
  mapping_bytes_ = file_bytes;
}

void BinarizedCorpus::open_attnlab() {
  const std::string& path = path_;
  // A file that is neither format: say that fairseq's was looked for too.
  const std::string not_fairseq = fmt::format(
      "; nor one of fairseq's formats: no index {} with the magic of mmap or lazy/cached", fairseq_index_path(path));
  if (mapping_bytes_ < kFingerprintOffset)
    throw DataError(fmt::format("{}: not an attnlab binarized corpus ({} bytes, shorter than the {}-byte header){}",
                                path, mapping_bytes_, kFingerprintOffset, not_fairseq));
  const unsigned char* header = mapping_;
  if (std::memcmp(header, kBinarizedMagic, sizeof kBinarizedMagic) != 0)
    throw DataError(fmt::format("{}: not an attnlab binarized corpus (bad magic){}", path, not_fairseq));
  auto version = load_little_endian<uint32_t>(header + 8);
  if (version == 1)
    throw DataError(fmt::format("{}: binarized corpus of format version 1 (no checksum); run `attnlab preprocess` "
                                "again to rebuild it in version {}",
                                path, kBinarizedVersion));
  if (version != kBinarizedVersion && version != kVersionWithoutFingerprint)
    throw DataError(fmt::format("{}: unsupported binarized corpus version {} (expected {} or {})", path, version,
                                kVersionWithoutFingerprint, kBinarizedVersion));
  auto dtype_code = load_little_endian<uint32_t>(header + 12);
  if (dtype_code != uint32_t(TokenDtype::kUInt16) && dtype_code != uint32_t(TokenDtype::kInt32))
    throw DataError(fmt::format("{}: unknown token dtype code {}", path, dtype_code));
  dtype_ = TokenDtype(dtype_code);
  const auto num_sentences = load_little_endian<uint64_t>(header + 16);
  const auto num_tokens = load_little_endian<uint64_t>(header + 24);
  const auto dictionary_size = load_little_endian<uint64_t>(header + 32);
  const size_t header_size = header_bytes(version);
  size_t expected = expected_file_bytes(header_size, num_sentences, num_tokens, dtype_);
  if (expected != mapping_bytes_)
    throw DataError(fmt::format("{}: corrupt or truncated binarized corpus: header ({} sentences, {} tokens) "
                                "implies {} bytes, file has {}",
                                path, num_sentences, num_tokens, expected, mapping_bytes_));
  num_sentences_ = num_sentences;
  num_tokens_ = num_tokens;
  if (version == kBinarizedVersion) dictionary_fingerprint_ = load_little_endian<uint64_t>(header + kFingerprintOffset);
  offsets_ = header + header_size;
  tokens_ = offsets_ + 8 * (num_sentences + 1);
  validate_contents();
  check_token_ids(dictionary_size);
  dictionary_size_ = dictionary_size;
  const uint64_t recorded = load_little_endian<uint64_t>(mapping_ + kChecksumOffset);
  const uint64_t actual = fnv1a64(mapping_ + kBinarizedChecksummedFrom, mapping_bytes_ - kBinarizedChecksummedFrom);
  if (actual != recorded)
    throw DataError(fmt::format("{}: checksum mismatch (recorded {:016x}, data gives {:016x}): the file was modified "
                                "or damaged; run `attnlab preprocess` again",
                                path, recorded, actual));
}

void BinarizedCorpus::open_fairseq(FairseqIndex index) {
  const std::string index_path = fairseq_index_path(path_);
  dtype_ = index.dtype;
  stored_id_shift_ = index.stored_id_shift;
  num_sentences_ = index.offsets.size() - 1;
  num_tokens_ = index.offsets.back();
  uint64_t expected_bytes;
  if (__builtin_mul_overflow(uint64_t(num_tokens_), uint64_t(token_dtype_bytes(dtype_)), &expected_bytes) ||
      expected_bytes != mapping_bytes_)
    throw DataError(fmt::format("{}: size mismatch with its fairseq index {}: {} sentences of {} tokens in all, "
                                "{} bytes each, but the file has {} bytes",
                                path_, index_path, num_sentences_, num_tokens_, token_dtype_bytes(dtype_),
                                mapping_bytes_));
  fairseq_offsets_ = std::move(index.offsets);
  offsets_ = reinterpret_cast<const unsigned char*>(fairseq_offsets_.data());
  tokens_ = mapping_;
  check_token_ids(std::nullopt);
}

void BinarizedCorpus::validate_contents() const {
  uint64_t previous = load_little_endian<uint64_t>(offsets_);
  if (previous != 0) throw DataError(fmt::format("{}: corrupt offsets: first offset is {}, not 0", path_, previous));
  for (size_t i = 1; i <= num_sentences_; ++i) {
    uint64_t offset = load_little_endian<uint64_t>(offsets_ + 8 * i);
    if (offset < previous || offset > num_tokens_)
      throw DataError(fmt::format("{}: corrupt offsets at sentence {}: {} after {} ({} tokens)", path_, i - 1,
                                  offset, previous, num_tokens_));
    if (offset == previous)
      throw DataError(fmt::format("{}: sentence {} is empty (every sentence ends with </s>)", path_, i - 1));
    previous = offset;
  }
  if (previous != num_tokens_)
    throw DataError(fmt::format("{}: corrupt offsets: last offset {} != token count {}", path_, previous, num_tokens_));
}

// Every id must be a valid one: not negative (nor a uint64 beyond int64), and below `limit`
// where the file records its dictionary's size. Records the largest.
void BinarizedCorpus::check_token_ids(std::optional<size_t> limit) {
  for (size_t position = 0; position < num_tokens_; ++position) {
    const int64_t id = token(position);
    if (id < 0 || (limit && uint64_t(id) >= *limit)) {
      const std::string value = dtype_ == TokenDtype::kUInt64
                                    ? fmt::format("{}", load_little_endian<uint64_t>(tokens_ + 8 * position))
                                    : fmt::format("{}", id);
      throw DataError(
          limit ? fmt::format("{}: token {} has id {} outside the dictionary (size {})", path_, position, value, *limit)
                : fmt::format("{}: token {} has id {}, not a valid token id (read as the type {} names{})", path_,
                              position, value, fairseq_index_path(path_), stored_id_shift_ ? ", stored plus one" : ""));
    }
    max_id_ = std::max(max_id_, id);
  }
}

// A negative stored value is an invalid id as it is (and shifting it could overflow).
int64_t BinarizedCorpus::token(size_t position) const {
  const int64_t stored = stored_value(position);
  return stored < 0 ? stored : stored - stored_id_shift_;
}

int64_t BinarizedCorpus::stored_value(size_t position) const {
  switch (dtype_) {
    case TokenDtype::kUInt8: return load_little_endian<uint8_t>(tokens_ + position);
    case TokenDtype::kInt8: return load_little_endian<int8_t>(tokens_ + position);
    case TokenDtype::kUInt16: return load_little_endian<uint16_t>(tokens_ + 2 * position);
    case TokenDtype::kInt16: return load_little_endian<int16_t>(tokens_ + 2 * position);
    case TokenDtype::kInt32: return load_little_endian<int32_t>(tokens_ + 4 * position);
    case TokenDtype::kUInt32: return load_little_endian<uint32_t>(tokens_ + 4 * position);
    case TokenDtype::kInt64:
    case TokenDtype::kUInt64:  // a uint64 beyond int64's range reads negative, an invalid id
      return load_little_endian<int64_t>(tokens_ + 8 * position);
  }
  return -1;  // unreachable: every dtype is listed
}

size_t BinarizedCorpus::length(size_t i) const {
  if (i >= num_sentences_)
    throw DataError(fmt::format("{}: sentence {} out of range ({} sentences)", path_, i, num_sentences_));
  return size_t(load_little_endian<uint64_t>(offsets_ + 8 * (i + 1)) - load_little_endian<uint64_t>(offsets_ + 8 * i));
}

void BinarizedCorpus::read_sentence(size_t i, std::span<int64_t> out) const {
  size_t n = length(i);
  if (out.size() != n)
    throw DataError(fmt::format("{}: sentence {} has {} tokens, output holds {}", path_, i, n, out.size()));
  auto start = size_t(load_little_endian<uint64_t>(offsets_ + 8 * i));
  for (size_t k = 0; k < n; ++k) out[k] = token(start + k);
}

std::vector<int64_t> BinarizedCorpus::sentence(size_t i) const {
  std::vector<int64_t> ids(length(i));
  read_sentence(i, ids);
  return ids;
}

std::vector<std::vector<int64_t>> BinarizedCorpus::sentences() const {
  std::vector<std::vector<int64_t>> all(num_sentences_);
  for (size_t i = 0; i < num_sentences_; ++i) all[i] = sentence(i);
  return all;
}

void BinarizedCorpus::release() {
  if (mapping_ && in_memory_.empty()) ::munmap(const_cast<unsigned char*>(mapping_), mapping_bytes_);
  mapping_ = nullptr;
}

BinarizedCorpus::BinarizedCorpus(BinarizedCorpus&& other) noexcept { *this = std::move(other); }

BinarizedCorpus& BinarizedCorpus::operator=(BinarizedCorpus&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
    format_ = other.format_;
    dtype_ = other.dtype_;
    stored_id_shift_ = other.stored_id_shift_;
    num_sentences_ = other.num_sentences_;
    num_tokens_ = other.num_tokens_;
    dictionary_size_ = other.dictionary_size_;
    max_id_ = other.max_id_;
    dictionary_fingerprint_ = other.dictionary_fingerprint_;
    offsets_ = other.offsets_;
    tokens_ = other.tokens_;
    fairseq_offsets_ = std::move(other.fairseq_offsets_);  // its data moves with it: offsets_ stays valid
    in_memory_ = std::move(other.in_memory_);              // so does this: mapping_ stays valid
    lines_ = std::move(other.lines_);
  }
  return *this;
}

BinarizedCorpus::~BinarizedCorpus() { release(); }

}  // namespace attn::data
