// The line loop behind `attnlab tokenize/detokenize` and the cleaning scripts
// (apps/cli/record_filter.hpp): records split on '\n' only, order kept with several threads, a
// missing final newline kept, invalid UTF-8 and a filter's errors reported as <stdin>:LINE; the
// byte-reading scripts' input taken as it comes.
#include <catch.hpp>

#include <sstream>
#include <string>

#include "apps/cli/record_filter.hpp"
#include "data/moses_tokenizer.hpp"
#include "data/normalize_punctuation.hpp"
#include "data/remove_non_printing.hpp"
#include "data/text_io.hpp"

namespace {

std::string filter_text(const std::string& input, int threads) {
  const attn::data::MosesTokenizer tokenizer;
  std::istringstream in(input);
  std::ostringstream out;
  attn::app::run_record_filter(in, out, "<stdin>", threads,
                               [&](std::string_view record) { return tokenizer.tokenize_record(record); });
  return out.str();
}

// `input` through a filter that takes any bytes; what it wrote before an error in `written`.
std::string filter_bytes(const std::string& input, int threads, const attn::app::RecordFilter& filter,
                         std::string* written = nullptr) {
  std::istringstream in(input);
  std::ostringstream out;
  try {
    attn::app::run_record_filter(in, out, "<stdin>", threads, filter, attn::app::RecordBytes::kAny);
  } catch (...) {
    if (written) *written = out.str();
    throw;
  }
  return out.str();
}

std::string remove_non_printing(std::string_view record) { return attn::data::remove_non_printing_record(record); }

}  // namespace

TEST_CASE("record filter keeps '\\r', blank lines and a missing final newline", "[moses]") {
  CHECK(filter_text("a,b\r\n  \nend.", 1) == "a , b\n  \nend .\n");
  CHECK(filter_text("x\n   ", 1) == "x\n   ");
  CHECK(filter_text("", 1).empty());
}

TEST_CASE("record filter with threads gives the single-threaded output in order", "[moses]") {
  std::string input;
  for (int i = 0; i < 10000; ++i) input += "Line " + std::to_string(i) + ", (done).\n";
  CHECK(filter_text(input, 3) == filter_text(input, 1));
}

TEST_CASE("record filter names <stdin> and the line of invalid UTF-8", "[moses]") {
  CHECK_THROWS_WITH(filter_text("fine\nalso fine\nbad \xC0\x80\n", 2), "<stdin>:3: invalid UTF-8 at byte 5");
}

// Expected outputs: normalize-punctuation.perl -l en and remove-non-printing-char.perl (Moses
// 3445289) on the same bytes.
TEST_CASE("the byte-reading scripts take invalid UTF-8 as the scripts do", "[moses]") {
  const attn::data::PunctuationNormalizer normalizer(attn::data::NormalizePunctuationOptions{"en", false});
  const auto normalize = [&](std::string_view record) { return normalizer.normalize_record(record); };
  CHECK(filter_bytes("a\xFF(b)\xC3 \xE2\x80\n\xED\xA0\x80\xC2\xA0%\nlast\xC0", 1, normalize) ==
        "a\xFF (b) \xC3 \xE2\x80\n\xED\xA0\x80%\nlast\xC0");
  // remove-non-printing-char decodes surrogates loosely (a space each) and stops at what it cannot decode.
  CHECK(filter_bytes("a\u00ADb\r\n\xED\xBF\xBF\nlast", 1, remove_non_printing) == "a b \n \nlast\n");
  std::string written;
  CHECK_THROWS_WITH(filter_bytes("fine\nnot \xC3(\n", 1, remove_non_printing, &written),
                    "<stdin>:2: invalid UTF-8 at byte 5");
  CHECK(written == "fine\n");
}

TEST_CASE("record filter names the line of the first record its filter fails on, with threads too", "[moses]") {
  std::string input;
  for (int i = 1; i <= 10000; ++i) input += i == 7000 || i == 9000 ? "bad \xC3(\n" : "fine\n";
  for (int threads : {1, 3})
    CHECK_THROWS_WITH(filter_bytes(input, threads, remove_non_printing), "<stdin>:7000: invalid UTF-8 at byte 5");
}
