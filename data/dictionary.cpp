#include "data/dictionary.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/core.h>

#include "core/checksum.hpp"
#include "data/post_process.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

constexpr std::string_view kOverwriteFlag = "#fairseq:overwrite";

// Byte length of the Unicode whitespace character starting at s[i] (str.isspace() set:
// \t..\r, \x1c..\x1f, space, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000), or 0 when s[i] does not start one.
size_t whitespace_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  unsigned b0 = byte(0);
  if ((b0 >= 0x09 && b0 <= 0x0D) || (b0 >= 0x1C && b0 <= 0x20)) return 1;
  if (b0 == 0xC2) return (byte(1) == 0x85 || byte(1) == 0xA0) ? 2 : 0;
  if (b0 == 0xE1) return (byte(1) == 0x9A && byte(2) == 0x80) ? 3 : 0;
  if (b0 == 0xE2) {
    unsigned b1 = byte(1), b2 = byte(2);
    if (b1 == 0x80) return (b2 <= 0x8A || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF) && b2 >= 0x80 ? 3 : 0;
    if (b1 == 0x81) return b2 == 0x9F ? 3 : 0;
    return 0;
  }
  if (b0 == 0xE3) return (byte(1) == 0x80 && byte(2) == 0x80) ? 3 : 0;
  return 0;
}

// Python's str.rstrip(): drops trailing Unicode whitespace.
std::string_view strip_trailing_whitespace(std::string_view s) {
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    size_t ws = whitespace_length(s, i);
    i += ws ? ws : 1;
    if (!ws) end = i;
  }
  return s.substr(0, end);
}

// The digits of a count as Python's int() reads them: after leading whitespace (the line's
// trailing whitespace is already gone) and an optional sign, ASCII digits with single
// underscores between them ("1_000"). Returns the sign and digits without the underscores,
// or "" when the field is not such a number.
std::string python_int_digits(std::string_view field) {
  while (size_t ws = whitespace_length(field, 0)) field.remove_prefix(ws);
  std::string digits;
  if (!field.empty() && (field.front() == '+' || field.front() == '-')) {
    if (field.front() == '-') digits += '-';
    field.remove_prefix(1);
  }
  for (size_t i = 0; i < field.size(); ++i) {
    const bool between_digits = i > 0 && i + 1 < field.size() && std::isdigit(static_cast<unsigned char>(field[i - 1])) &&
                                std::isdigit(static_cast<unsigned char>(field[i + 1]));
    if (field[i] == '_' && between_digits) continue;
    if (!std::isdigit(static_cast<unsigned char>(field[i]))) return "";
    digits += field[i];
  }
  return digits.empty() || digits == "-" ? "" : digits;
}

int64_t parse_count(std::string_view field, const std::string& source_name, size_t line_number) {
  int64_t value = 0;
  const std::string digits = python_int_digits(field);
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size())
    throw DataError(fmt::format("{}:{}: invalid count '{}' (expected '<symbol> <count> [#fairseq:overwrite]')",
                                source_name, line_number, field));
  if (value < 0)
    throw DataError(fmt::format("{}:{}: negative count '{}' (a count is how often the symbol occurred)", source_name,
                                line_number, field));
  return value;
}

}  // namespace

std::vector<std::string_view> split_on_whitespace(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t start = std::string_view::npos;
  for (size_t i = 0; i < line.size();) {
    size_t ws = whitespace_length(line, i);
    if (ws) {
      if (start != std::string_view::npos) tokens.push_back(line.substr(start, i - start));
      start = std::string_view::npos;
      i += ws;
    } else {
      if (start == std::string_view::npos) start = i;
      ++i;
    }
  }
  if (start != std::string_view::npos) tokens.push_back(line.substr(start));
  return tokens;
}

Dictionary::Dictionary() {
  for (const char* special : {"<s>", "<pad>", "</s>", "<unk>"}) add_symbol(special, 0);
}

int32_t Dictionary::add_symbol(std::string_view word, int64_t n, bool overwrite) {
  std::string key(word);
  if (!overwrite) {
    auto found = indices_.find(key);
    if (found != indices_.end()) {
      counts_[size_t(found->second)] += n;
      return found->second;
    }
  }
  auto id = static_cast<int32_t>(symbols_.size());
  symbols_.push_back(key);
  counts_.push_back(n);
  indices_[std::move(key)] = id;
  return id;
}

void Dictionary::add_line(std::string_view line) {
  for (std::string_view token : split_on_whitespace(line)) add_symbol(token);
  counts_[kEos] += 1;
}

void Dictionary::add_file(const std::string& path) {
  for (const std::string& line : read_lines(path)) add_line(line);
}

void Dictionary::merge_counts(const Dictionary& other) {
  for (size_t id = 0; id < other.size(); ++id) add_symbol(other.symbols_[id], other.counts_[id]);
}

void Dictionary::finalize(int64_t threshold, int64_t nwords, int64_t padding_factor) {
  std::vector<int32_t> order;
  for (auto id = kNumSpecial; id < static_cast<int32_t>(size()); ++id) order.push_back(id);
  // Count descending, ties by symbol; UTF-8 byte order equals code-point order.
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (counts_[size_t(a)] != counts_[size_t(b)]) return counts_[size_t(a)] > counts_[size_t(b)];
    return symbols_[size_t(a)] < symbols_[size_t(b)];
  });
  size_t max_real = nwords <= 0 ? order.size() : size_t(std::max<int64_t>(nwords - kNumSpecial, 0));

  Dictionary finalized;
  for (int32_t special = 0; special < kNumSpecial; ++special) finalized.counts_[size_t(special)] = counts_[size_t(special)];
  for (size_t k = 0; k < std::min(max_real, order.size()); ++k) {
    int32_t id = order[k];
    if (counts_[size_t(id)] < threshold) break;
    finalized.add_symbol(symbols_[size_t(id)], counts_[size_t(id)], true);
  }
  finalized.pad_to_multiple(padding_factor);
  *this = std::move(finalized);
}

void Dictionary::pad_to_multiple(int64_t padding_factor) {
  for (int madeup = 0; padding_factor > 1 && size() % size_t(padding_factor) != 0; ++madeup)
    add_symbol(fmt::format("madeupword{:04d}", madeup), 0);  // a word already there is skipped
}

int32_t Dictionary::index(std::string_view word) const {
  auto found = indices_.find(std::string(word));
  return found == indices_.end() ? kUnk : found->second;
}

bool Dictionary::contains(std::string_view word) const { return indices_.count(std::string(word)) > 0; }

const std::string& Dictionary::symbol(int32_t id) const {
  if (id < 0 || size_t(id) >= size())
    throw DataError(fmt::format("dictionary id {} out of range (dictionary size {})", id, size()));
  return symbols_[size_t(id)];
}

int64_t Dictionary::count(int32_t id) const {
  symbol(id);  // range check
  return counts_[size_t(id)];
}

EncodedLine Dictionary::encode_line(std::string_view line, bool append_eos) const {
  EncodedLine encoded;
  for (std::string_view token : split_on_whitespace(line)) {
    int32_t id = index(token);
    if (id == kUnk && token != "<unk>") ++encoded.unknown_tokens;
    encoded.ids.push_back(id);
  }
  if (append_eos) encoded.ids.push_back(kEos);
  return encoded;
}

std::string Dictionary::decode(std::span<const int64_t> ids, std::string_view scheme,
                               bool include_eos) const {
  std::string sentence;
  for (int64_t id : ids) {
    if (id == kBos || id == kPad || (id == kEos && !include_eos)) continue;
    if (!sentence.empty()) sentence += ' ';
    sentence += symbol(static_cast<int32_t>(id));
  }
  return post_process(sentence, scheme);
}

uint64_t Dictionary::fingerprint() const {
  uint64_t hash = kFnv1a64OffsetBasis;
  for (const std::string& symbol : symbols_) {
    hash = fnv1a64(hash, symbol.data(), symbol.size());
    hash = fnv1a64(hash, "\n", 1);
  }
  return hash;
}

std::string Dictionary::to_text() const {
  std::string text;
  for (size_t id = kNumSpecial; id < size(); ++id) text += fmt::format("{} {}\n", symbols_[id], counts_[id]);
  return text;
}

void Dictionary::save(const std::string& path) const { write_file_atomic(path, to_text()); }

Dictionary Dictionary::load(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return parse(text, path);
}

Dictionary Dictionary::parse(std::string_view text, const std::string& source_name) {
  // fairseq would read a byte order mark as part of the first symbol; refusing it is clearer.
  if (text.starts_with("\xEF\xBB\xBF"))
    throw DataError(fmt::format("{}:1: starts with a UTF-8 byte order mark; save the dictionary without it",
                                source_name));
  Dictionary dictionary;
  size_t line_number = 0;
  while (!text.empty()) {
    // Lines end at \n, \r\n or a lone \r, as Python's universal newlines read them: a
    // dictionary saved with old Mac line ends is a list of entries, not one long symbol.
    size_t end = text.find_first_of("\r\n");
    std::string_view line = strip_trailing_whitespace(text.substr(0, end));
    size_t next = end == std::string_view::npos ? text.size() : text.compare(end, 2, "\r\n") == 0 ? end + 2 : end + 1;
    text.remove_prefix(next);
    ++line_number;
    auto split_last = [&](std::string_view s) {
      size_t space = s.rfind(' ');
      if (space == std::string_view::npos)
        throw DataError(fmt::format("{}:{}: expected '<symbol> <count> [#fairseq:overwrite]', got '{}'",
                                    source_name, line_number, line));
      return std::pair{s.substr(0, space), s.substr(space + 1)};
    };
    auto [word, field] = split_last(line);
    bool overwrite = field == kOverwriteFlag;
    if (overwrite) std::tie(word, field) = split_last(word);
    int64_t count = parse_count(field, source_name, line_number);
    if (!overwrite && dictionary.contains(word))
      throw DataError(fmt::format("{}:{}: duplicate symbol '{}' (add '#fairseq:overwrite' to allow it)",
                                  source_name, line_number, word));
    dictionary.add_symbol(word, count, overwrite);
  }
  return dictionary;
}

Dictionary build_dictionary(const std::vector<std::string>& files, int64_t threshold, int64_t nwords,
                            int64_t padding_factor, int workers) {
  Dictionary dictionary;
  for (const std::string& file : files) {
    std::vector<std::string> lines = read_lines(file);
    std::vector<Dictionary> partial(size_t(std::max(workers, 1)));
#pragma omp parallel for schedule(static) num_threads(int(partial.size()))
    for (size_t worker = 0; worker < partial.size(); ++worker)
      for (size_t i = worker * lines.size() / partial.size(); i < (worker + 1) * lines.size() / partial.size(); ++i)
        partial[worker].add_line(lines[i]);
    for (const Dictionary& counts : partial) dictionary.merge_counts(counts);
  }
  dictionary.finalize(threshold, nwords, padding_factor);
  return dictionary;
}

Dictionary target_first_joined_dictionary(const Dictionary& target, const Dictionary& source, int64_t padding_factor) {
  Dictionary joined = target;
  for (auto id = Dictionary::kNumSpecial; id < static_cast<int32_t>(source.size()); ++id)
    if (!joined.contains(source.symbol(id))) joined.add_symbol(source.symbol(id), source.count(id));
  joined.pad_to_multiple(padding_factor);  // numbered on after the target's madeupwords
  return joined;
}

std::string dictionary_file_name(const std::string& lang) { return fmt::format("dict.{}.txt", lang); }

}  // namespace attn::data
