// Tests of data/bleu_tokenizers: sacreBLEU 13a/intl/char on 794 strings whose outputs
// sacreBLEU 2.6.0 produced, zh on cases written for it (expected values from sacreBLEU 2.6.0),
// the ATAT one-liner on 28 cases, and the Python / Perl whitespace and case rules
// (docs/mt-tools.md §0, §3).
#include <catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/bleu.hpp"
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
  for (auto tokenizer :
       {BleuTokenizer::k13a, BleuTokenizer::kIntl, BleuTokenizer::kZh, BleuTokenizer::kChar, BleuTokenizer::kNone})
    CHECK(parse_bleu_tokenizer(bleu_tokenizer_name(tokenizer)) == tokenizer);
  CHECK(bleu_tokenizer_names() == std::vector<std::string>{"13a", "intl", "zh", "char", "none"});
  CHECK(apply_bleu_tokenizer(BleuTokenizer::kNone, " a  b ") == " a  b ");
  CHECK_THROWS_AS(parse_bleu_tokenizer("ja-mecab"), DataError);
  CHECK_THROWS_WITH(parse_bleu_tokenizer("v14"), Catch::Contains("v14") && Catch::Contains("13a"));
}

TEST_CASE("zh tokenizer reproduces sacreBLEU 2.6.0's TokenizerZh", "[bleu][tokenizer][zh]") {
  struct Case {
    std::string input, expected;
  };
  const std::vector<Case> cases = {
      {"北京大学的学生在2014年访问了U.S.。", "北 京 大 学 的 学 生 在 2014 年 访 问 了 U . S . 。"},
      {"我花了$5.5，约合1,000.50元（3-4天）。", "我 花 了 $ 5.5 ， 约 合 1,000.50 元 （ 3 - 4 天 ） 。"},
      // No spaces are added at the ends, and the line is stripped first: `5.` and `.5` stay.
      {"中国人5.", "中 国 人 5."},
      {" .5中", ".5 中"},
      {".5 a, b.", ".5 a , b ."},
      // None of 13a's entity, <skipped> and `-\n` steps.
      {"&quot;中文&quot;<skipped>&amp;", "& quot ; 中 文 & quot ; < skipped > & amp ;"},
      {"line-\nbreak中", "line- break 中"},
      // U+2001–U+2A6D are split out (dashes, quotes, arrows, math), U+2A6E is not.
      {"a\u2013b x\u2019s\u2192y", "a – b x ’ s → y"},
      {"a\u2A6Db\u2A6Ec", "a ⩭ b⩮c"},
      // Extension B and the compatibility supplement stay; U+4E3D is split.
      {"\U00020000\U0002A6A5\u4E3Dx\U0002F800y", "\U00020000\U0002A6A5 \u4E3D x\U0002F800y"},
      // Kana and Hangul syllables stay; halfwidth kana and fullwidth forms are split.
      {"ひらがなカタカナ한국어ｱｲｳＡＢＣ", "ひらがなカタカナ한국어 ｱ ｲ ｳ Ａ Ｂ Ｃ"},
      {"ａ．ｂ，ｃ", "ａ ． ｂ ， ｃ"},
      {"x䶵x䶶x龻x龼x", "x 䶵 x䶶x 龻 x龼x"},
      {"\u3000中\u3000文\u00A0", "中 文"},
      {"😀☃❤\uFE0F", "😀 ☃ ❤ \uFE0F"},
      {"Größe中e\u0301，«ok»", "Größe 中 e\u0301 ， «ok»"},
      {"", ""},
      {" \t\u3000 ", ""},
  };
  for (const Case& c : cases) {
    INFO(c.input);
    CHECK(tokenize_zh(c.input) == c.expected);
    CHECK(apply_bleu_tokenizer(BleuTokenizer::kZh, c.input) == c.expected);
  }
}

TEST_CASE("zh tokenizer: the bounds of the characters it splits out", "[bleu][tokenizer][zh]") {
  // The 13 ranges sacreBLEU 2.6.0's _is_chinese_char accepts, found by trying every code point.
  const std::vector<std::pair<char32_t, char32_t>> ranges = {
      {0x2001, 0x2A6D}, {0x2E80, 0x2FDF}, {0x2FF0, 0x303F}, {0x3100, 0x312F}, {0x31A0, 0x31EF},
      {0x3200, 0x4DB5}, {0x4E00, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9},
      {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF}};
  for (const auto& [first, last] : ranges) {
    INFO(std::hex << uint32_t(first) << "-" << uint32_t(last));
    CHECK_FALSE(is_sacrebleu_chinese_character(first - 1));
    CHECK(is_sacrebleu_chinese_character(first));
    CHECK(is_sacrebleu_chinese_character(last));
    CHECK_FALSE(is_sacrebleu_chinese_character(last + 1));
  }
  for (char32_t c : {char32_t(0x20000), char32_t(0x2A6D6), char32_t(0x2F800), char32_t(0x3042), char32_t(0xAC00)})
    CHECK_FALSE(is_sacrebleu_chinese_character(c));
}

TEST_CASE("corpus BLEU with the zh tokenizer matches sacreBLEU 2.6.0", "[bleu][tokenizer][zh]") {
  const std::vector<std::string> hyps = {"北京大学的学生在2014年访问了美国。", "我花了$5.5，约合1,000元。", "Hello 世界!"};
  const std::vector<std::vector<std::string>> refs = {
      {"北京大学的学生2014年访问了美国。", "我花了5.5美元，约合1,000元。", "hello 世界！"}};
  SacreBleuOptions options;
  options.tokenizer = BleuTokenizer::kZh;
  const std::string signature = sacrebleu_signature(options, 1);
  CHECK(format_sacrebleu_score(sacrebleu_corpus_score(hyps, refs, options), signature) ==
        "BLEU|nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|version:2.6.0 = 69.10 87.1/75.0/64.0/54.5 "
        "(BP = 1.000 ratio = 1.000 hyp_len = 31 ref_len = 31)");
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
