// Text files: the partial last line an interrupted appender leaves is cut, whole lines kept.
#include <catch.hpp>

#include <string>

#include "data/text_io.hpp"
#include "test_support.hpp"

using attn::data::cut_partial_last_line;
using attn::test::TempDir;

namespace {

std::string contents_after_cut(TempDir& tmp, const std::string& text, size_t expected_cut) {
  const std::string path = attn::test::write_file(tmp.dir / "log.jsonl", text);
  CHECK(cut_partial_last_line(path) == expected_cut);
  return attn::test::read_file(path);
}

}  // namespace

TEST_CASE("cut_partial_last_line keeps whole lines and cuts a torn last one", "[text_io]") {
  TempDir tmp;
  CHECK(contents_after_cut(tmp, "{\"a\": 1}\n{\"a\": 2}\n", 0) == "{\"a\": 1}\n{\"a\": 2}\n");
  CHECK(contents_after_cut(tmp, "{\"a\": 1}\n{\"a\": 2}\n{\"typ", 5) == "{\"a\": 1}\n{\"a\": 2}\n");
  CHECK(contents_after_cut(tmp, "{\"typ", 5).empty());
  CHECK(contents_after_cut(tmp, "", 0).empty());
  // A torn line longer than the block the search reads at a time.
  const std::string whole = "{\"a\": 1}\n";
  CHECK(contents_after_cut(tmp, whole + std::string(10000, 'x'), 10000) == whole);
  CHECK(cut_partial_last_line((tmp.dir / "missing.jsonl").string()) == 0);
}
