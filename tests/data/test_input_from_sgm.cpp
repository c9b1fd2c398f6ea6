// input-from-sgm.perl: segments of a WMT SGML file (docs/mt-tools.md §2.5). Expected outputs
// written by hand from the script's rules (no upstream vectors exist for this script).
#include <catch.hpp>

#include <sstream>

#include "data/input_from_sgm.hpp"
#include "data/text_io.hpp"

namespace {

std::vector<std::string> segments(const std::string& sgm) {
  std::istringstream in(sgm);
  return attn::data::read_sgm_segments(in, "test.sgm");
}

using Segments = std::vector<std::string>;

}  // namespace

TEST_CASE("input-from-sgm: a WMT test set gives one line per <seg>", "[input_from_sgm]") {
  const std::string sgm =
      "<srcset setid=\"newstest2014\" srclang=\"any\">\n"
      "<doc sysid=\"ref\" docid=\"1\" origlang=\"de\">\n"
      "<p>\n"
      "<seg id=\"1\">Hallo   Welt &amp; co.</seg>\n"
      "<SEG id=2>\t Zwei\tTabs \t</SEG>\n"
      "</p>\n"
      "</doc>\n"
      "</srcset>\n";
  // Spaces squeezed and trimmed, entities untouched, tags in any case, other lines ignored.
  CHECK(segments(sgm) == Segments{"Hallo Welt &amp; co.", "Zwei Tabs"});
}

TEST_CASE("input-from-sgm: continuation lines are joined without a separator", "[input_from_sgm]") {
  CHECK(segments("<seg id=\"1\">\nnext line</seg>\n") == Segments{"next line"});
  CHECK(segments("<seg id=\"1\">first\nsecond</seg>\n") == Segments{"firstsecond"});
  CHECK(segments("<seg id=\"1\">a\n\nb\n</seg>\n") == Segments{"ab"});
  CHECK(segments("<seg id=1>a\r\n</seg>\r\n") == Segments{"a"});
}

TEST_CASE("input-from-sgm: tag matching follows the script's regular expressions", "[input_from_sgm]") {
  // <seg[^>]+> needs at least one byte before '>': a bare <seg> is no opening tag.
  CHECK(segments("<seg>bare</seg>\n<seg id=3>ok</seg>\n") == Segments{"ok"});
  // From the first opening tag to the LAST </seg> of the (joined) line.
  CHECK(segments("<seg id=1>a</seg><seg id=2>b</seg>\n") == Segments{"a</seg><seg id=2>b"});
  CHECK(segments("<seg id=1>a</seg>x<seg id=2>\nb</seg>\n") == Segments{"a</seg>x<seg id=2>b"});
  CHECK(segments("x <seg id=1 > y </seg> z\n") == Segments{"y"});
  CHECK(segments("<seg id=1></seg>\n") == Segments{""});
  // \s is ASCII whitespace only: NBSP stays.
  CHECK(segments("<seg id=1>\u00A0nbsp\u00A0</seg>\n") == Segments{"\u00A0nbsp\u00A0"});
  // A last line without '\n' is read whole.
  CHECK(segments("<seg id=1>no newline</seg>") == Segments{"no newline"});
}

TEST_CASE("input-from-sgm: errors name the file and line", "[input_from_sgm]") {
  CHECK_THROWS_WITH(segments("<doc>\n<seg id=1>never closed\nmore\n"),
                    Catch::Contains("test.sgm:2") && Catch::Contains("not closed"));
  CHECK_THROWS_WITH(segments("<seg id=1>ok</seg>\n<seg id=2>bad \xFF</seg>\n"),
                    Catch::Contains("test.sgm:2") && Catch::Contains("UTF-8"));
  CHECK_THROWS_AS(segments("<seg id=1>\nbad \xC3(</seg>\n"), attn::data::DataError);
}
