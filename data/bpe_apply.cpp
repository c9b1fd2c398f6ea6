// subword-nmt-compatible BPE application (docs/mt-tools.md §1.2–§1.4).
#include "data/bpe_apply.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <exception>
#include <functional>
#include <queue>

#include <fmt/core.h>
#include <unicode/regex.h>
#include <unicode/utext.h>

#include "data/python_regex.hpp"
#include "data/text_io.hpp"

namespace attn::data {

namespace {

constexpr std::string_view kEndOfWord = "</w>";

bool is_strip_char(char c) { return c == '\r' || c == '\n' || c == ' '; }

std::optional<int64_t> parse_integer(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "#version: 0.2" -> minor version 2 (upstream: last whitespace field, trailing ".0" groups
// removed, split on '.'); only 0.1 and 0.2 exist.
int parse_version_header(std::string_view header, const std::string& name) {
  std::string_view field = header;
  while (!field.empty() && std::isspace(static_cast<unsigned char>(field.back()))) field.remove_suffix(1);
  field = field.substr(field.find_last_of(" \t") + 1);
  std::string_view trimmed = field;
  while (trimmed.size() >= 2) {
    size_t dot = trimmed.rfind('.');
    if (dot == std::string_view::npos || dot + 1 == trimmed.size() ||
        trimmed.find_first_not_of('0', dot + 1) != std::string_view::npos)
      break;
    trimmed = trimmed.substr(0, dot);
  }
  if (trimmed == "0.1") return 1;
  if (trimmed == "0.2") return 2;
  throw DataError(fmt::format("{}:1: unsupported BPE codes header '{}' (expected '#version: 0.2'{})", name,
                              header.substr(0, header.find('\n')),
                              field == "byte" ? "; byte-level codes are not supported" : ""));
}

// Drops the last n code points (Python s[:-n]).
std::string drop_last_code_points(const std::string& s, size_t n) {
  size_t end = s.size();
  while (n-- > 0 && end > 0) end = code_point_start(s, end - 1);
  return s.substr(0, end);
}

// A symbol of a word being merged: its code-symbol id and its byte range in the segment.
struct Symbol {
  uint32_t id, begin, end;
};

// An adjacent pair that has a merge, at the time it was queued: `left` is the position (in
// the initial word) of its left symbol; the pair is still there if that symbol and its right
// neighbour still have these ids.
struct QueuedPair {
  int64_t rank;
  uint32_t left;
  uint32_t left_id, right_id;
  bool operator>(const QueuedPair& other) const {
    return rank != other.rank ? rank > other.rank : left > other.left;
  }
};

// subword-nmt's merge loop (repeat: take the adjacent pair of lowest rank, merge all its
// occurrences left to right, non-overlapping) in O(n log n) instead of a rescan of the word
// per merge: the symbols form a linked list, every adjacent pair with a merge is queued by
// (rank, position), and entries made stale by earlier merges are skipped when popped. All
// queued occurrences of the lowest rank are merged, in order, before anything queued by those
// merges (a rank names one pair, and a merged symbol never equals one of its parts, so the
// new pairs have other ranks): the same steps as the rescanning loop, the same result.
std::vector<Symbol> apply_merges(std::vector<Symbol> word, const BpeCodes& codes) {
  constexpr uint32_t kNone = UINT32_MAX;
  const auto n = static_cast<uint32_t>(word.size());
  std::vector<uint32_t> next(n), previous(n);
  std::vector<bool> alive(n, true);
  for (uint32_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? i + 1 : kNone;
    previous[i] = i > 0 ? i - 1 : kNone;
  }
  std::priority_queue<QueuedPair, std::vector<QueuedPair>, std::greater<>> queue;
  auto queue_pair = [&](uint32_t left) {
    if (left == kNone || next[left] == kNone) return;
    const uint32_t left_id = word[left].id, right_id = word[next[left]].id;
    if (const BpeCodes::Merge* m = codes.find_merge(left_id, right_id)) queue.push({m->rank, left, left_id, right_id});
  };
  auto still_there = [&](const QueuedPair& pair) {
    return alive[pair.left] && word[pair.left].id == pair.left_id && next[pair.left] != kNone &&
           word[next[pair.left]].id == pair.right_id;
  };
  for (uint32_t i = 0; i + 1 < n; ++i) queue_pair(i);
  std::vector<QueuedPair> occurrences;
  while (!queue.empty()) {
    occurrences.clear();
    for (const int64_t rank = queue.top().rank; !queue.empty() && queue.top().rank == rank; queue.pop())
      occurrences.push_back(queue.top());
    const uint32_t merged_id = codes.find_merge(occurrences[0].left_id, occurrences[0].right_id)->merged;
    for (const QueuedPair& pair : occurrences) {
      if (!still_there(pair)) continue;  // stale, a duplicate, or overlapping a merge just made
      const uint32_t left = pair.left, right = next[left];
      word[left] = {merged_id, word[left].begin, word[right].end};
      alive[right] = false;
      next[left] = next[right];
      if (next[left] != kNone) previous[next[left]] = left;
      queue_pair(previous[left]);
      queue_pair(left);
    }
  }
  std::vector<Symbol> merged;
  for (uint32_t i = 0; i != kNone && n > 0; i = next[i]) merged.push_back(word[i]);
  return merged;
}

}  // namespace

BpeCodes BpeCodes::parse(std::string_view text, const std::string& name, int64_t merges) {
  BpeCodes codes;
  size_t first_line_number = 1;
  if (text.starts_with("#version:")) {
    size_t end = text.find('\n');
    codes.version_minor_ = parse_version_header(text.substr(0, end), name);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    first_line_number = 2;
  } else {
    codes.version_minor_ = 1;
  }
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);  // read().rstrip('\n')
  std::vector<std::pair<std::string, std::string>> lines;
  for (size_t start = 0, n = 0; !text.empty() && start <= text.size(); ++n) {
    size_t end = std::min(text.find('\n', start), text.size());
    if (merges >= 0 && static_cast<int64_t>(n) >= merges) break;
    std::string_view line = strip_line(text.substr(start, end - start));
    size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
      throw DataError(fmt::format("{}:{}: invalid line in BPE codes file: '{}' (expected two subword units "
                                  "separated by one space)", name, n + first_line_number, line));
    lines.emplace_back(line.substr(0, space), line.substr(space + 1));
    start = end + 1;
  }
  // Duplicates: the rank is that of the first occurrence; the reverse map prefers, among
  // pairs with the same concatenation, the one whose last occurrence comes first (upstream's
  // dict-building order).
  StringMap<size_t> last_occurrence;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string key = lines[i].first + ' ' + lines[i].second;
    uint32_t left = codes.intern(lines[i].first), right = codes.intern(lines[i].second);
    codes.merges_.try_emplace((uint64_t(left) << 32) | right,
                              Merge{static_cast<int64_t>(i), codes.intern(lines[i].first + lines[i].second)});
    last_occurrence[key] = i;
  }
  StringMap<size_t> reverse_rank;
  for (const auto& [key, last] : last_occurrence) {
    const auto& pair = lines[last];
    std::string merged = pair.first + pair.second;
    auto [it, inserted] = reverse_rank.try_emplace(merged, last);
    if (!inserted && last > it->second) continue;
    it->second = last;
    codes.reverse_[merged] = pair;
  }
  return codes;
}

BpeCodes BpeCodes::read(const std::string& path, int64_t merges) { return parse(read_utf8_file(path), path, merges); }

uint32_t BpeCodes::intern(const std::string& symbol) {
  return symbol_ids_.try_emplace(symbol, static_cast<uint32_t>(symbol_ids_.size())).first->second;
}

uint32_t BpeCodes::symbol_id(std::string_view symbol) const {
  auto found = symbol_ids_.find(symbol);
  return found == symbol_ids_.end() ? kNoSymbol : found->second;
}

const BpeCodes::Merge* BpeCodes::find_merge(uint32_t left, uint32_t right) const {
  if (left == kNoSymbol || right == kNoSymbol) return nullptr;
  auto found = merges_.find((uint64_t(left) << 32) | right);
  return found == merges_.end() ? nullptr : &found->second;
}

const std::pair<std::string, std::string>* BpeCodes::split(std::string_view merged) const {
  auto found = reverse_.find(merged);
  return found == reverse_.end() ? nullptr : &found->second;
}

StringSet parse_bpe_vocabulary(std::string_view text, const std::string& name, std::optional<int64_t> threshold) {
  StringSet vocabulary;
  TextLines lines = split_lines(std::string(text), LineMode::SplitLines);
  for (size_t i = 0; i < lines.lines.size(); ++i) {
    std::string_view line = strip_line(lines.lines[i]);
    size_t space = line.find(' ');
    std::optional<int64_t> count;
    if (space != std::string_view::npos) count = parse_integer(line.substr(space + 1));
    if (!count) throw DataError(fmt::format("{}:{}: expected 'word count' (one space), got '{}'", name, i + 1, line));
    if (!threshold || *count >= *threshold) vocabulary.emplace(line.substr(0, space));
  }
  return vocabulary;
}

StringSet read_bpe_vocabulary(const std::string& path, std::optional<int64_t> threshold) {
  return parse_bpe_vocabulary(read_utf8_file(path), path, threshold);
}

namespace {

// ICU's bounds on one match operation, which turn a runaway glossary into an error; both grow
// with the word, so that patterns that are linear in it fit on a 10 MB word. Time: ICU's unit
// is 10,000 backtracking steps (a fifth of a millisecond here); a match may take 1,000 units
// (a fifth of a second of backtracking, far more than a sensible glossary needs on a word)
// plus one per 100 bytes. Memory: ICU's backtracking stack takes up to 16 bytes per character
// for a loop like a+ or (ab)+; it may take 8 MB plus 32 bytes per byte.
constexpr size_t kBaseTimeLimit = 1000, kBytesPerTimeUnit = 100;
constexpr size_t kBaseStackLimit = 8 << 20, kStackBytesPerByte = 32;

int32_t clamp_to_int32(size_t value) { return static_cast<int32_t>(std::min<size_t>(value, INT32_MAX)); }
int32_t time_limit(size_t text_bytes) { return clamp_to_int32(kBaseTimeLimit + text_bytes / kBytesPerTimeUnit); }
int32_t stack_limit(size_t text_bytes) { return clamp_to_int32(kBaseStackLimit + kStackBytesPerByte * text_bytes); }

}  // namespace

// re.match, re.search and re.split of one GlossaryRegex, for one thread. ICU matches the UTF-8
// bytes in place, so its positions are byte offsets, and one ICU matcher serves text after text
// (setting one up for each took longer than the match). Every ICU error becomes a DataError
// naming the glossary.
class GlossaryRegex::Matcher {
 public:
  explicit Matcher(const GlossaryRegex& regex) : regex_(&regex) {
    UErrorCode status = U_ZERO_ERROR;
    matcher_.reset(regex.pattern_->matcher(status));
    check(status);
  }

  bool match(std::string_view text) {
    start(text);
    return call([&](UErrorCode& status) { return matcher_->lookingAt(status); });
  }

  bool search(std::string_view text) {
    start(text);
    return find();
  }

  // The text around the matches and the groups that took part, in order.
  std::vector<std::string> split(std::string_view text) {
    start(text);
    std::vector<std::string> pieces;
    size_t copied = 0;
    while (find()) {
      const auto [match_start, match_end] = span(0);
      pieces.emplace_back(text.substr(copied, match_start - copied));
      for (int32_t g = 1; g <= matcher_->groupCount(); ++g) {
        const auto [group_start, group_end] = span(g);
        if (group_start != std::string_view::npos)
          pieces.emplace_back(text.substr(group_start, group_end - group_start));
      }
      copied = match_end;
    }
    pieces.emplace_back(text.substr(copied));
    return pieces;
  }

 private:
  // Points the matcher at `text` (it keeps a shallow clone of the UText: the bytes must live
  // while it matches) with the limits for its length.
  void start(std::string_view text) {
    text_bytes_ = text.size();
    UErrorCode status = U_ZERO_ERROR;
    UText utext = UTEXT_INITIALIZER;
    utext_openUTF8(&utext, text.data(), static_cast<int64_t>(text.size()), &status);
    if (U_SUCCESS(status)) matcher_->reset(&utext);
    utext_close(&utext);
    if (U_SUCCESS(status)) matcher_->setStackLimit(stack_limit(text.size()), status);
    if (U_SUCCESS(status)) matcher_->setTimeLimit(time_limit(text.size()), status);
    check(status);
  }

  bool find() {
    return call([&](UErrorCode& status) { return matcher_->find(status); });
  }

  // Byte offsets of group g of the last match (0: the whole match); npos when g took no part.
  std::pair<size_t, size_t> span(int32_t group) {
    UErrorCode status = U_ZERO_ERROR;
    const int64_t begin = matcher_->start64(group, status), end = matcher_->end64(group, status);
    check(status);
    if (begin < 0) return {std::string_view::npos, std::string_view::npos};
    return {static_cast<size_t>(begin), static_cast<size_t>(end)};
  }

  template <class Operation>
  bool call(Operation operation) {
    UErrorCode status = U_ZERO_ERROR;
    const bool found = operation(status);
    check(status);
    return found;
  }

  void check(UErrorCode status) const {
    if (U_SUCCESS(status)) return;
    const std::string glossary = fmt::format("--glossaries '{}'", regex_->label_);
    if (status == U_REGEX_TIME_OUT)
      throw DataError(fmt::format("{}: matching a word of {} bytes takes too many backtracking steps (a pattern "
                                  "like (a+)+c?); simplify the regex",
                                  glossary, text_bytes_));
    if (status == U_REGEX_STACK_OVERFLOW)
      throw DataError(fmt::format("{}: matching a word of {} bytes needs more than {} MB of backtracking stack; "
                                  "simplify the regex",
                                  glossary, text_bytes_, stack_limit(text_bytes_) >> 20));
    throw DataError(fmt::format("{}: {}", glossary, u_errorName(status)));
  }

  const GlossaryRegex* regex_;
  std::unique_ptr<icu::RegexMatcher> matcher_;
  size_t text_bytes_ = 0;
};

GlossaryRegex::GlossaryRegex(const std::string& regex, std::string label) : label_(std::move(label)) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError where{};
  // UREGEX_UNIX_LINES: only '\n' ends a line for '.', '^' and '$', as in Python.
  const std::string icu_regex = python_regex_to_icu(regex, label_);
  pattern_.reset(icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(icu_regex), UREGEX_UNIX_LINES, where, status));
  if (U_FAILURE(status))
    throw DataError(fmt::format("--glossaries '{}': invalid regex ({} at character {} of '{}', as rewritten for ICU)",
                                label_, u_errorName(status), where.offset + 1, icu_regex));
}

GlossaryPattern::GlossaryPattern(const std::string& glossary)
    : anywhere(glossary, glossary), whole("^" + glossary + "$", glossary), captured("(" + glossary + ")", glossary) {}

namespace {

// One thread's matchers of a GlossaryPattern.
struct GlossaryMatchers {
  explicit GlossaryMatchers(const GlossaryPattern& pattern)
      : anywhere(pattern.anywhere), whole(pattern.whole), captured(pattern.captured) {}
  GlossaryRegex::Matcher anywhere, whole, captured;
};

std::vector<std::string> isolate_glossary(const std::string& word, GlossaryMatchers& glossary) {
  if (glossary.whole.match(word) || !glossary.anywhere.search(word)) return {word};
  // re.split('(' + glossary + ')', word): empty pieces dropped, the last one stripped of '\r\n '.
  std::vector<std::string> pieces = glossary.captured.split(word);
  const std::string ending = std::move(pieces.back());
  pieces.pop_back();
  std::erase(pieces, std::string());
  if (!ending.empty()) pieces.emplace_back(strip_line(ending));
  return pieces;
}

}  // namespace

std::vector<std::string> isolate_glossary(const std::string& word, const GlossaryPattern& glossary) {
  GlossaryMatchers matchers(glossary);
  return isolate_glossary(word, matchers);
}

// One thread's state: its glossary matchers, and its cache of words -> their subwords joined by
// "@@ " (upstream caches per segment; the result of a word depends only on the word, so caching
// whole words is equivalent).
class BpeEncoder::Workspace {
 public:
  explicit Workspace(const BpeEncoder& encoder) {
    for (const GlossaryPattern& pattern : encoder.glossary_patterns_) glossaries.emplace_back(pattern);
    if (encoder.any_glossary_) any_glossary.emplace(*encoder.any_glossary_);
  }

  StringMap<std::string> words;
  std::vector<GlossaryMatchers> glossaries;
  std::optional<GlossaryRegex::Matcher> any_glossary;
};

BpeEncoder::BpeEncoder(BpeCodes codes, BpeApplyOptions options) : codes_(std::move(codes)), options_(std::move(options)) {
  if (options_.glossaries.empty()) return;
  std::string alternatives;
  for (const auto& glossary : options_.glossaries) {
    if (!alternatives.empty()) alternatives += '|';
    alternatives += glossary;
    glossary_patterns_.emplace_back(glossary);
  }
  any_glossary_.emplace("^(" + alternatives + ")$", alternatives);
}

std::vector<std::string> BpeEncoder::isolate_glossaries(std::string_view word, Workspace& workspace) const {
  std::vector<std::string> segments{std::string(word)};
  for (GlossaryMatchers& glossary : workspace.glossaries) {
    std::vector<std::string> next;
    for (const auto& segment : segments)
      for (auto& piece : isolate_glossary(segment, glossary)) next.push_back(std::move(piece));
    segments = std::move(next);
  }
  return segments;
}

std::vector<std::string> BpeEncoder::isolate_glossaries(std::string_view word) const {
  Workspace workspace(*this);
  return isolate_glossaries(word, workspace);
}

// encode(): merges by lowest rank, all occurrences of the chosen pair at once (apply_merges,
// O(n log n) in the word's length, so a 10 MB "word" is no attack). A symbol is
// a byte range of the segment plus its code-symbol id; the end-of-word marker belongs to the
// last symbol (v0.2) or is a symbol of its own with an empty range (v0.1), and dropping it
// at the end (upstream's '</w>' stripping) just means printing the ranges.
std::vector<std::string> BpeEncoder::encode(std::string_view segment, Workspace& workspace) const {
  if (workspace.any_glossary && workspace.any_glossary->match(segment)) return {std::string(segment)};
  std::vector<std::string_view> chars = split_code_points(segment);
  if (chars.size() <= 1) return {std::string(segment)};
  std::vector<Symbol> word;
  uint32_t offset = 0;
  for (size_t k = 0; k < chars.size(); ++k) {
    bool glue_end = k + 1 == chars.size() && codes_.glues_end_of_word();
    uint32_t id = codes_.symbol_id(glue_end ? std::string(chars[k]) + std::string(kEndOfWord) : chars[k]);
    word.push_back({id, offset, offset + static_cast<uint32_t>(chars[k].size())});
    offset += static_cast<uint32_t>(chars[k].size());
  }
  if (!codes_.glues_end_of_word()) word.push_back({codes_.symbol_id(kEndOfWord), offset, offset});
  word = apply_merges(std::move(word), codes_);
  if (word.back().begin == word.back().end) word.pop_back();  // a lone v0.1 end-of-word marker
  std::vector<std::string> subwords;
  subwords.reserve(word.size());
  for (const Symbol& symbol : word) subwords.emplace_back(segment.substr(symbol.begin, symbol.end - symbol.begin));
  return options_.vocabulary.empty() ? subwords : check_vocabulary(subwords);
}

bool BpeEncoder::in_vocabulary(const std::string& subword, bool final) const {
  return options_.vocabulary.contains(final ? subword : subword + options_.separator);
}

// recursive_split: undo merges until every unit is in the vocabulary or cannot be split.
void BpeEncoder::recursive_split(const std::string& segment, bool final, std::vector<std::string>& out) const {
  const auto* pair = codes_.split(final ? segment + std::string(kEndOfWord) : segment);
  if (pair == nullptr) {
    out.push_back(segment);
    return;
  }
  const std::string& left = pair->first;
  const std::string right = final ? drop_last_code_points(pair->second, kEndOfWord.size()) : pair->second;
  if (in_vocabulary(left, false))
    out.push_back(left);
  else
    recursive_split(left, false, out);
  if (in_vocabulary(right, final))
    out.push_back(right);
  else
    recursive_split(right, final, out);
}

std::vector<std::string> BpeEncoder::check_vocabulary(const std::vector<std::string>& segments) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < segments.size(); ++i) {
    bool final = i + 1 == segments.size();
    if (in_vocabulary(segments[i], final))
      out.push_back(segments[i]);
    else
      recursive_split(segments[i], final, out);
  }
  return out;
}

std::vector<std::string> BpeEncoder::segment_word(std::string_view word, Workspace& workspace) const {
  if (options_.glossaries.empty()) return encode(word, workspace);
  std::vector<std::string> out;
  for (const auto& segment : isolate_glossaries(word, workspace))
    for (auto& subword : encode(segment, workspace)) out.push_back(std::move(subword));
  return out;
}

std::vector<std::string> BpeEncoder::segment_word(std::string_view word) const {
  Workspace workspace(*this);
  return segment_word(word, workspace);
}

const std::string& BpeEncoder::segment_word_cached(std::string_view word, Workspace& workspace) const {
  auto found = workspace.words.find(word);
  if (found != workspace.words.end()) return found->second;
  std::vector<std::string> subwords = segment_word(word, workspace);
  std::string joined;
  for (size_t i = 0; i < subwords.size(); ++i) {
    if (i) joined += options_.separator + ' ';
    joined += subwords[i];
  }
  return workspace.words.emplace(std::string(word), std::move(joined)).first->second;
}

std::string BpeEncoder::process_line(std::string_view line, Workspace& workspace) const {
  size_t leading = 0, trailing = 0;
  while (leading < line.size() && is_strip_char(line[leading])) ++leading;
  while (trailing < line.size() && is_strip_char(line[line.size() - 1 - trailing])) ++trailing;
  std::string out(line.substr(0, leading));
  bool first_word = true;
  for (std::string_view word : split_words(line)) {
    if (!first_word) out += ' ';
    first_word = false;
    out += segment_word_cached(word, workspace);
  }
  if (trailing != 0 && trailing != line.size()) out += line.substr(line.size() - trailing);
  return out;
}

std::string BpeEncoder::process_line(std::string_view line) const {
  Workspace workspace(*this);
  return process_line(line, workspace);
}

std::string BpeEncoder::apply(const TextLines& text) const {
  const auto& lines = text.lines;
  std::vector<std::string> outputs(lines.size());
  // A glossary's error (an exception must not leave a parallel region): the first is kept and
  // rethrown, and the lines not yet started are skipped.
  std::exception_ptr failure;
  std::atomic<bool> failed = false;
#pragma omp parallel
  {
    Workspace workspace(*this);
#pragma omp for schedule(dynamic, 512)
    for (size_t i = 0; i < lines.size(); ++i) {
      if (failed.load(std::memory_order_relaxed)) continue;
      try {
        outputs[i] = process_line(lines[i], workspace);
      } catch (...) {
#pragma omp critical
        if (!failure) failure = std::current_exception();
        failed = true;
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
  size_t total = 0;
  for (const auto& out : outputs) total += out.size();
  std::string result;
  result.reserve(total);
  for (const auto& out : outputs) result += out;
  return result;
}

}  // namespace attn::data
