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
  // From the opening tag to the LAST </seg> of the (joined) line.
  CHECK(segments("<seg id=1>a</seg>b</seg> c\n") == Segments{"a</seg>b"});
  CHECK(segments("<seg id=1 <seg id=2>a</seg>\n") == Segments{"a"});  // one tag: [^>]+ spans "<seg id=2"
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

TEST_CASE("input-from-sgm: a second <seg> before the line's segment is over is an error", "[input_from_sgm]") {
  // The script would print one line for two segments ("never closed<seg id=\"2\">x"), which
  // shifts every later line against the other side of a test set.
  CHECK_THROWS_WITH(segments("<p>\n<seg id=\"1\">never closed\n<seg id=\"2\">x</seg>\n"),
                    Catch::Contains("test.sgm:3") && Catch::Contains("opened on line 2"));
  CHECK_THROWS_WITH(segments("<seg id=1>a<seg id=2>b</seg>\n"),
                    Catch::Contains("test.sgm:1") && Catch::Contains("earlier on the line"));
  CHECK_THROWS_WITH(segments("<seg id=1>\n<seg id=2>b</seg>\n"), Catch::Contains("test.sgm:2"));
  // A tag whose "<seg" and '>' are on two joined lines is one too.
  CHECK_THROWS_WITH(segments("<seg id=1>a <se\ng id=2>b</seg>\n"), Catch::Contains("test.sgm:2"));
  CHECK_THROWS_WITH(segments("<seg id=\"1\">a</seg><seg id=\"2\">b</seg>\n"),
                    Catch::Contains("test.sgm:1") && Catch::Contains("second <seg> on the line"));
  CHECK_THROWS_WITH(segments("<seg id=1>a\n</seg> <seg id=2>b</seg>\n"),
                    Catch::Contains("test.sgm:2") && Catch::Contains("second <seg> on the line"));
}

TEST_CASE("input-from-sgm: a segment of 200,000 lines is read in linear time", "[input_from_sgm]") {
  // Re-searching the whole joined line for each line joined took half a minute here.
  std::string sgm = "<seg id=1>";
  for (int i = 0; i < 200000; ++i) sgm += "x\n";
  sgm += "</seg>\n";
  CHECK(segments(sgm) == Segments{std::string(200000, 'x')});
}
