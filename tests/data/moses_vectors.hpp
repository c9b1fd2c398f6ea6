// Helpers shared by the Moses tokenizer and detokenizer tests: vector files are read as bytes
// and split into records on '\n' only (each record keeps its '\n'), the way the Perl scripts
// read lines, so '\r', NBSP, U+2028 and a missing final newline all reach the code under test.
#pragma once
#include <catch.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.hpp"

namespace attn::test {

inline std::vector<std::string_view> split_records(std::string_view text) {
  std::vector<std::string_view> records;
  while (!text.empty()) {
    size_t end = text.find('\n');
    size_t length = end == std::string_view::npos ? text.size() : end + 1;
    records.push_back(text.substr(0, length));
    text.remove_prefix(length);
  }
  return records;
}

// Applies `filter` to every record of the input file and compares its output with the record
// of the expected file at the same position; fails naming the first differing line.
inline void check_records(const std::string& input_file, const std::string& expected_file,
                          const std::function<std::string(std::string_view)>& filter) {
  const std::string input = read_file(vector_path(input_file));
  const std::string expected = read_file(vector_path(expected_file));
  const auto input_records = split_records(input);
  const auto expected_records = split_records(expected);
  INFO(input_file << " -> " << expected_file);
  REQUIRE(input_records.size() == expected_records.size());
  size_t mismatches = 0, first = 0;
  std::string first_output;
  for (size_t i = 0; i < input_records.size(); ++i) {
    std::string output = filter(input_records[i]);
    if (output == expected_records[i]) continue;
    if (mismatches++ == 0) {
      first = i;
      first_output = std::move(output);
    }
  }
  if (mismatches == 0) return;
  FAIL(mismatches << " of " << input_records.size() << " lines differ; first at line " << first + 1
                  << "\n  input:    [" << input_records[first] << "]\n  expected: [" << expected_records[first]
                  << "]\n  got:      [" << first_output << "]");
}

}  // namespace attn::test
