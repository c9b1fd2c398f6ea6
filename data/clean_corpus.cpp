// clean-corpus-n.perl (docs/mt-tools.md §2.5); the header lists the rules.
#include "data/clean_corpus.hpp"

#include <algorithm>
#include <fstream>

#include <fmt/core.h>

#include "data/perl_unicode.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

size_t word_count(std::string_view cleaned) { return size_t(std::count(cleaned.begin(), cleaned.end(), ' ')) + 1; }

// Longest run of code points other than ' ' and '|' (the only \s left after cleaning is ' ').
size_t longest_word_length(std::string_view cleaned) {
  size_t longest = 0, current = 0;
  for (char c : cleaned) {
    if (c == ' ' || c == '|') current = 0;
    else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) longest = std::max(longest, ++current);
  }
  return longest;
}

// /[ \|]\|/: an empty factor in a factored corpus.
bool has_blank_factor(std::string_view cleaned) {
  return cleaned.find(" |") != std::string_view::npos || cleaned.find("||") != std::string_view::npos;
}

// One of the two input files, read line by line with FILE:LINE errors.
class CorpusSide {
 public:
  explicit CorpusSide(std::string path) : path_(std::move(path)), in_(open_input_file(path_)) {
  }

  bool next(std::string& line) {
    if (!std::getline(in_, line)) {
      check_read(in_, path_);
      return false;
    }
    check_utf8(line, path_, ++lines_read_);
    return true;
  }
  // Reads the rest of the file and returns its line count.
  size_t count_all_lines() {
    std::string line;
    while (std::getline(in_, line)) ++lines_read_;
    return lines_read_;
  }
  const std::string& path() const { return path_; }
  size_t lines_read() const { return lines_read_; }

 private:
  std::string path_;
  std::ifstream in_;
  size_t lines_read_ = 0;
};

[[noreturn]] void throw_line_count_mismatch(CorpusSide& first, CorpusSide& second) {
  const size_t first_lines = first.count_all_lines(), second_lines = second.count_all_lines();
  throw DataError(fmt::format("parallel files differ in line count: {} has {} lines, {} has {} lines",
                              first.path(), first_lines, second.path(), second_lines));
}

void check_factors(std::string_view cleaned, const CorpusSide& side) {
  if (has_blank_factor(cleaned))
    throw DataError(fmt::format("{}:{}: blank factor (\" |\" or \"||\") in a factored corpus", side.path(),
                                side.lines_read()));
}

void count_drop(PairVerdict verdict, CleanCorpusReport& report) {
  switch (verdict) {
    case PairVerdict::Empty: ++report.empty; break;
    case PairVerdict::Length: ++report.out_of_length; break;
    case PairVerdict::Ratio: ++report.over_ratio; break;
    case PairVerdict::LongWord: ++report.long_word; break;
    case PairVerdict::Keep: break;
  }
}

}  // namespace

std::string clean_corpus_line(std::string_view line, bool keep_bars) {
  std::u32string cleaned;
  for (char32_t c : perl::decode_utf8(line, "clean-corpus line")) {
    if (c == U'|' && !keep_bars) continue;
    if (!perl::is_space(c)) cleaned.push_back(c);
    else if (cleaned.empty() || cleaned.back() != U' ') cleaned.push_back(U' ');
  }
  if (!cleaned.empty() && cleaned.front() == U' ') cleaned.erase(0, 1);
  if (!cleaned.empty() && cleaned.back() == U' ') cleaned.pop_back();
  return perl::encode_utf8(cleaned);
}

PairVerdict judge_pair(std::string_view first, std::string_view second, const CleanCorpusOptions& options) {
  if (first.empty() || second.empty()) return PairVerdict::Empty;
  const double first_words = double(word_count(first)), second_words = double(word_count(second));
  auto out_of_range = [&](double words) { return words > double(options.max_words) || words < double(options.min_words); };
  if (out_of_range(first_words) || out_of_range(second_words)) return PairVerdict::Length;
  if (second_words / first_words > options.max_ratio || first_words / second_words > options.max_ratio)
    return PairVerdict::Ratio;
  if (std::max(longest_word_length(first), longest_word_length(second)) > options.max_word_length)
    return PairVerdict::LongWord;
  return PairVerdict::Keep;
}

CleanCorpusReport clean_corpus(const std::string& corpus, const std::string& l1, const std::string& l2,
                               const std::string& out, const CleanCorpusOptions& options) {
  if (options.min_words > options.max_words)
    throw DataError(fmt::format("clean-corpus: MIN {} > MAX {} words would drop every pair", options.min_words,
                                options.max_words));
  CorpusSide first(corpus + "." + l1), second(corpus + "." + l2);
  CleanCorpusReport report;
  std::string kept_first, kept_second, first_line, second_line;
  bool factored = false;
  while (true) {
    const bool got_first = first.next(first_line), got_second = second.next(second_line);
    if (got_first != got_second) throw_line_count_mismatch(first, second);
    if (!got_first) break;
    if (++report.input_pairs == 1)
      factored = first_line.find('|') != std::string::npos || second_line.find('|') != std::string::npos;
    const std::string cleaned_first = clean_corpus_line(first_line, factored);
    const std::string cleaned_second = clean_corpus_line(second_line, factored);
    const PairVerdict verdict = judge_pair(cleaned_first, cleaned_second, options);
    if (verdict != PairVerdict::Keep) {
      count_drop(verdict, report);
      continue;
    }
    if (factored) {
      check_factors(cleaned_first, first);
      check_factors(cleaned_second, second);
    }
    ++report.kept_pairs;
    kept_first.append(cleaned_first).push_back('\n');
    kept_second.append(cleaned_second).push_back('\n');
  }
  OutputFiles outputs;
  outputs.add(out + "." + l1, kept_first);
  outputs.add(out + "." + l2, kept_second);
  outputs.commit();
  return report;
}

}  // namespace attn::data
