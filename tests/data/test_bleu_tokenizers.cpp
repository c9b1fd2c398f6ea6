// Tests of data/bleu_tokenizers: sacreBLEU 13a/intl/char on 794 strings whose outputs
// sacreBLEU 2.6.0 produced, the ATAT one-liner on 28 cases, and the Python / Perl
// whitespace and case rules (docs/mt-tools.md §0, §3).
#include <catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/bleu_tokenizers.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using namespace attn::data;

namespace {

const std::string kBleuVectors = attn::test::vector_path("own/bleu/");

std::vector<std::string> as_strings(const std::vector<std::string_view>& views) {
  return std::vector<std::string>(views.begin(), views.end());
}

}  // namespace

TEST_CASE("sacreBLEU tokenizers reproduce sacreBLEU 2.6.0 on every vector", "[bleu][tokenizer]") {
  std::vector<std::string> records = read_lines(kBleuVectors + "sacrebleu_tokenizers_expected.jsonl");
  REQUIRE(records.size() == 794);
  for (const std::string& record : records) {
    auto expected = nlohmann::json::parse(record);
    const std::string input = expected["input"];
    const std::string rstripped(rstrip_python_whitespace(input));
    INFO(expected["source"].get<std::string>() << " line " << expected["line"].get<int>() << ": " << input);
    CHECK(tokenize_13a(input) == expected["13a"].get<std::string>());
    CHECK(tokenize_intl(input) == expected["intl"].get<std::string>());
    CHECK(tokenize_char(input) == expected["char"].get<std::string>());
    CHECK(tokenize_13a(rstripped) == expected["13a_after_rstrip"].get<std::string>());
    CHECK(tokenize_intl(rstripped) == expected["intl_after_rstrip"].get<std::string>());
  }
}

TEST_CASE("13a rules that need more than one line: <skipped>, -\\n, entities", "[bleu][tokenizer]") {
  CHECK(tokenize_13a("<skipped>text<skipped>") == "text");
  CHECK(tokenize_13a("line-\nbreak") == "linebreak");
  CHECK(tokenize_13a("two\nlines") == "two lines");
  CHECK(tokenize_13a("&amp;quot; &lt;b&gt;") == "& quot ; < b >");  // &quot; is not decoded twice
  CHECK(tokenize_13a("it&apos;s") == "it & apos ; s");
}

TEST_CASE("tokenizer names round-trip and unknown names are rejected", "[bleu][tokenizer]") {
  for (auto tokenizer : {BleuTokenizer::k13a, BleuTokenizer::kIntl, BleuTokenizer::kChar, BleuTokenizer::kNone})
    CHECK(parse_bleu_tokenizer(bleu_tokenizer_name(tokenizer)) == tokenizer);
  CHECK(apply_bleu_tokenizer(BleuTokenizer::kNone, " a  b ") == " a  b ");
  CHECK_THROWS_AS(parse_bleu_tokenizer("zh"), DataError);
  CHECK_THROWS_WITH(parse_bleu_tokenizer("v14"), Catch::Contains("v14") && Catch::Contains("13a"));
}

TEST_CASE("compound splitting matches the ATAT one-liner on 28 cases", "[bleu][atat]") {
  std::vector<std::string> inputs = read_lines(kBleuVectors + "compound-split.in");
  std::vector<std::string> outputs = read_lines(kBleuVectors + "compound-split.out");
  REQUIRE(inputs.size() == 28);
  REQUIRE(outputs.size() == inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("line " << i + 1 << ": " << inputs[i]);
    CHECK(compound_split(inputs[i]) == outputs[i]);
  }
}

TEST_CASE("compound splitting of whole files gives the .atat vectors", "[bleu][atat]") {
  for (std::string name : {"hyp.tok", "ref.tok", "ref2.tok", "hyp.txt", "ref.txt"}) {
    std::vector<std::string> plain = read_lines(kBleuVectors + name);
    std::vector<std::string> split = read_lines(kBleuVectors + name + ".atat");
    REQUIRE(plain.size() == split.size());
    for (size_t i = 0; i < plain.size(); ++i) {
      INFO(name << " line " << i + 1);
      CHECK(compound_split(plain[i]) == split[i]);
    }
  }
}

TEST_CASE("Python whitespace: split, rstrip", "[bleu][whitespace]") {
  const std::string nbsp = "\xC2\xA0", zero_width = "\xE2\x80\x8B", line_separator = "\xE2\x80\xA8";
  CHECK(as_strings(split_python_whitespace("  a\tb\x1c" "c" + nbsp + "d" + line_separator + "e" + zero_width + "f  ")) ==
        std::vector<std::string>{"a", "b", "c", "d", "e" + zero_width + "f"});
  CHECK(split_python_whitespace("").empty());
  CHECK(split_python_whitespace(" \t\r ").empty());
  CHECK(rstrip_python_whitespace("  x y " + nbsp + "\r") == "  x y");
  CHECK(rstrip_python_whitespace(" \t") == "");
  CHECK(is_python_whitespace(0x3000));
  CHECK(is_python_whitespace(0x1F));
  CHECK_FALSE(is_python_whitespace(0x180E));
  CHECK_FALSE(is_python_whitespace(0xFEFF));
}

TEST_CASE("Perl byte whitespace keeps NBSP and U+001C inside tokens", "[bleu][whitespace]") {
  const std::string nbsp = "\xC2\xA0";
  CHECK(as_strings(split_perl_byte_whitespace(" a" + nbsp + "b\x0b" "c\x1c" "d\r\n")) ==
        std::vector<std::string>{"a" + nbsp + "b", "c\x1c" "d"});
}

TEST_CASE("lower-casing: Python lower() is full Unicode, Perl lc on bytes is ASCII only", "[bleu][case]") {
  CHECK(python_lower("Größe ÄÖÜ ΟΔΟΣ") == "größe äöü οδος");  // final sigma
  CHECK(python_lower("İ") == "i\xCC\x87");                    // I with dot → i + combining dot
  CHECK(ascii_lower("Größe ÄÖÜ ABC") == "größe ÄÖÜ abc");
}
