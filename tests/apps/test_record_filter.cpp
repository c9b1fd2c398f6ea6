// The line loop behind `attnlab tokenize/detokenize` (apps/cli/record_filter.hpp): records split on
// '\n' only, order kept with several threads, a missing final newline kept, invalid UTF-8
// reported as <stdin>:LINE.
#include <catch.hpp>

#include <sstream>
#include <string>

#include "apps/cli/record_filter.hpp"
#include "data/moses_tokenizer.hpp"
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
