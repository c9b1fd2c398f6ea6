#include "data/ding_corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <set>

#include <fmt/core.h>

#include "data/seeded_shuffle.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

constexpr std::string_view kSideSeparator = " :: ";
constexpr std::string_view kSubEntrySeparator = " | ";

std::vector<std::string_view> split_at(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> parts;
  for (size_t found; (found = text.find(separator)) != std::string_view::npos;) {
    parts.push_back(text.substr(0, found));
    text.remove_prefix(found + separator.size());
  }
  parts.push_back(text);
  return parts;
}

// Removes `{...}` and `[...]` with the spaces before them; an unclosed bracket is kept.
std::string strip_annotations(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char close = text[i] == '{' ? '}' : text[i] == '[' ? ']' : '\0';
    size_t end = close ? text.find(close, i + 1) : std::string_view::npos;
    if (end == std::string_view::npos) {
      out += text[i];
      continue;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    i = end;
  }
  return out;
}

std::string collapse_spaces(std::string_view text) {
  std::string out;
  for (char c : text) {
    bool space = c == ' ' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

size_t count_words(std::string_view text) {
  size_t words = 0;
  bool in_word = false;
  for (char c : text) {
    bool space = c == ' ';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

}  // namespace

std::string clean_ding_text(std::string_view text) {
  std::string stripped = strip_annotations(text);
  std::string_view first_alternative = stripped;
  first_alternative = first_alternative.substr(0, first_alternative.find(';'));
  return collapse_spaces(first_alternative);
}

bool is_ding_sentence(std::string_view text) {
  if (text.empty()) return false;
  char last = text.back();
  return (last == '.' || last == '?' || last == '!') && count_words(text) >= 3;
}

namespace {

// The cleaned sub-entry pairs of one dictionary line (none for comments, lines without
// " :: " and lines whose sides have different numbers of sub-entries).
std::vector<SentencePair> aligned_sub_entries(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t sides = line.find(kSideSeparator);
  if (line.empty() || line.front() == '#' || sides == std::string_view::npos) return {};
  auto german = split_at(line.substr(0, sides), kSubEntrySeparator);
  auto english = split_at(line.substr(sides + kSideSeparator.size()), kSubEntrySeparator);
  if (german.size() != english.size()) return {};
  std::vector<SentencePair> pairs;
  for (size_t k = 0; k < german.size(); ++k) pairs.push_back({clean_ding_text(english[k]), clean_ding_text(german[k])});
  return pairs;
}

bool is_sentence_pair(const SentencePair& pair) {
  return is_ding_sentence(pair.english) && is_ding_sentence(pair.german);
}

bool is_entry_pair(const SentencePair& pair) {
  return !pair.english.empty() && !pair.german.empty() && !is_sentence_pair(pair);
}

template <typename Keep>
std::vector<SentencePair> sub_entries_where(std::string_view line, Keep keep) {
  std::vector<SentencePair> pairs = aligned_sub_entries(line);
  std::erase_if(pairs, [&](const SentencePair& pair) { return !keep(pair); });
  return pairs;
}

// Keeps the first occurrence of each pair.
class DistinctPairs {
 public:
  void add(SentencePair pair) {
    if (seen_.emplace(pair.english, pair.german).second) kept_.push_back(std::move(pair));
  }
  std::vector<SentencePair> take() { return std::move(kept_); }

 private:
  std::set<std::pair<std::string, std::string>> seen_;
  std::vector<SentencePair> kept_;
};

}  // namespace

std::vector<SentencePair> ding_sentence_pairs(std::string_view line) {
  return sub_entries_where(line, is_sentence_pair);
}

std::vector<SentencePair> ding_entry_pairs(std::string_view line) { return sub_entries_where(line, is_entry_pair); }

std::vector<SentencePair> read_ding_sentence_pairs(const std::string& path) { return read_ding_corpus(path).sentences; }

DingCorpus read_ding_corpus(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw DataError(fmt::format("{}: Ding dictionary not found; install the Debian package trans-de-en "
                                "(apt-get install trans-de-en), or name a copy of it (prepare --input, demo --ding)", path));
  DistinctPairs sentences, entries;
  const std::vector<std::string> lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (!blank && line.front() != '#' && line.find(kSideSeparator) == std::string::npos) {
      const size_t shown = line.size() > 80 ? code_point_start(line, 80) : line.size();  // whole characters
      throw DataError(fmt::format("{}:{}: not a Ding dictionary line (expected 'German :: English'): '{}'", path, i + 1,
                                  line.substr(0, shown)));
    }
    for (SentencePair& pair : aligned_sub_entries(line)) {
      if (is_sentence_pair(pair))
        sentences.add(std::move(pair));
      else if (is_entry_pair(pair))
        entries.add(std::move(pair));
    }
  }
  return {sentences.take(), entries.take()};
}

CorpusSplit split_corpus(std::vector<SentencePair> pairs, uint64_t seed, size_t valid_size, size_t test_size) {
  // Written so that no sum can wrap around: valid_size + test_size < pairs.size().
  if (valid_size >= pairs.size() || test_size >= pairs.size() - valid_size)
    throw DataError(fmt::format("corpus of {} pairs is too small for {} valid and {} test pairs", pairs.size(),
                                valid_size, test_size));
  seeded_shuffle(pairs, seed);
  auto valid_end = pairs.begin() + std::ptrdiff_t(valid_size);
  auto test_end = valid_end + std::ptrdiff_t(test_size);
  return CorpusSplit{{test_end, pairs.end()}, {pairs.begin(), valid_end}, {valid_end, test_end}};
}

void add_entries_to_train(CorpusSplit& split, std::vector<SentencePair> entries, size_t count, uint64_t seed) {
  seeded_shuffle(entries, seed);
  entries.resize(std::min(count, entries.size()));
  split.train.insert(split.train.end(), std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
}

void write_corpus_split(const CorpusSplit& split, const std::string& out_dir) {
  create_folders(out_dir, "the corpus folder");
  OutputFiles outputs;
  auto add_side = [&](const std::vector<SentencePair>& pairs, const std::string& name, bool english) {
    std::string text;
    for (const SentencePair& pair : pairs) text += (english ? pair.english : pair.german) + "\n";
    outputs.add((std::filesystem::path(out_dir) / name).string(), text);
  };
  for (auto [pairs, name] : {std::pair{&split.train, "train"}, {&split.valid, "valid"}, {&split.test, "test"}}) {
    add_side(*pairs, std::string(name) + ".en", true);
    add_side(*pairs, std::string(name) + ".de", false);
  }
  outputs.commit();
}

}  // namespace attn::data
