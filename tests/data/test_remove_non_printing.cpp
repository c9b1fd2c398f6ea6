// remove-non-printing-char.perl: every \p{C} code point becomes a space (docs/mt-tools.md §2.5).
// Expected outputs written by hand from the rule (no upstream vectors exist for this script).
#include <catch.hpp>

#include "data/remove_non_printing.hpp"
#include "data/text_io.hpp"

using attn::data::remove_non_printing;
using attn::data::remove_non_printing_record;

TEST_CASE("remove-non-printing-char: each kind of \\p{C} becomes a space", "[remove_non_printing]") {
  CHECK(remove_non_printing("a\tb\rc\x7f" "d") == "a b c d");                           // Cc (C0, DEL)
  CHECK(remove_non_printing("c1\u0085x") == "c1 x");                                      // Cc (C1)
  CHECK(remove_non_printing("soft\u00ADhyphen") == "soft hyphen");                        // Cf
  CHECK(remove_non_printing("zw\u200Bsp\uFEFFbom\u200Ertl") == "zw sp bom rtl");        // Cf
  CHECK(remove_non_printing("pua\uE000x") == "pua x");                                    // Co
  CHECK(remove_non_printing("un\u0378assigned") == "un assigned");                       // Cn
  CHECK(remove_non_printing("plane\U000F0000x") == "plane x");                           // Co, plane 15
}

TEST_CASE("remove-non-printing-char: printing characters and spaces stay", "[remove_non_printing]") {
  const std::string kept = "Grüße, 中文 — \u00A0nbsp \u2009thin é\u0301 😀 ¿?";
  CHECK(remove_non_printing(kept) == kept);
  // One space per removed code point: no squeezing.
  CHECK(remove_non_printing("a\t\tb") == "a  b");
}

TEST_CASE("remove-non-printing-char: records are chomped and always end in '\\n'", "[remove_non_printing]") {
  CHECK(remove_non_printing_record("a\u00ADb\n") == "a b\n");
  CHECK(remove_non_printing_record("crlf\r\n") == "crlf \n");
  CHECK(remove_non_printing_record("last") == "last\n");
  CHECK(remove_non_printing_record("\n") == "\n");
}

TEST_CASE("remove-non-printing-char: invalid UTF-8 is an error", "[remove_non_printing]") {
  CHECK_THROWS_AS(remove_non_printing("ok \xC3("), attn::data::DataError);
  CHECK_THROWS_WITH(remove_non_printing_record("ok \xFF\n"), "invalid UTF-8 at byte 4");
}

TEST_CASE("remove-non-printing-char: surrogates and values above U+10FFFF become spaces",
          "[remove_non_printing]") {
  // Expected outputs from remove-non-printing-char.perl, which decodes these loosely.
  CHECK(remove_non_printing("x\xED\xA0\x80y") == "x y");                                    // U+D800
  CHECK(remove_non_printing("x\xED\xA0\x80\xED\xB0\x80y") == "x  y");                        // a CESU-8 pair
  CHECK(remove_non_printing("x\xF4\x90\x80\x80y\xF7\xBF\xBF\xBFz") == "x y z");             // 4-byte forms
  CHECK(remove_non_printing("x\xF8\x88\x80\x80\x80y\xFD\xBF\xBF\xBF\xBF\xBFz") == "x y z");  // 5, 6 bytes
  CHECK(remove_non_printing("x\xFE\x82\x80\x80\x80\x80\x80y") == "x y");                    // 7 bytes
  // The script dies on overlong forms and truncated sequences.
  for (std::string_view bad : {"\xE0\x80\x80", "\xC1\xBF", "\xF0\x80\x80\x80", "\xF8\x80\x80\x80\x80",
                               "\xFC\x80\x80\x80\x80\x80", "\xFE\x81\x80\x80\x80\x80\x80", "\xED\xA0", "\xFF\x80"})
    CHECK_THROWS_WITH(remove_non_printing(std::string("x") + std::string(bad)), "invalid UTF-8 at byte 2");
}
