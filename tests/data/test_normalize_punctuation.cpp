// normalize-punctuation.perl rules, one case per rule, expected outputs written by hand from
// the script's rules (docs/mt-tools.md §2.5; no upstream vectors exist for this script).
#include <catch.hpp>

#include "data/normalize_punctuation.hpp"

using attn::data::NormalizePunctuationOptions;
using attn::data::PunctuationNormalizer;

namespace {

std::string normalize(std::string_view record, const std::string& language = "en", bool penn = false) {
  return PunctuationNormalizer(NormalizePunctuationOptions{language, penn}).normalize_record(record);
}

}  // namespace

TEST_CASE("normalize-punctuation: spacing around brackets, colons, semicolons, percent", "[normalize_punctuation]") {
  CHECK(normalize("a\r\nb\r\n") == "a\nb\n");
  CHECK(normalize("x(y)z\n") == "x (y) z\n");
  CHECK(normalize("a   b\n") == "a b\n");
  // A line starting with "(" gains a leading space.
  CHECK(normalize("(a) .\n") == " (a).\n");
  CHECK(normalize("(a) , (b) ! (c) x\n") == " (a), (b)! (c) x\n");
  CHECK(normalize("x( a )\n") == "x (a) \n");
  CHECK(normalize("5 % and x %\n") == "5% and x %\n");
  CHECK(normalize("a : b ; c\n") == "a: b; c\n");
}

TEST_CASE("normalize-punctuation: quotes, dashes, ellipsis", "[normalize_punctuation]") {
  CHECK(normalize("`a'\n") == "'a'\n");
  CHECK(normalize("''a''\n") == " \" a \" \n");
  CHECK(normalize("„a“ ”b”\n") == "\"a\" \"b\"\n");
  CHECK(normalize("1–2\n") == "1-2\n");
  CHECK(normalize("a — b\n") == "a - b\n");
  CHECK(normalize("a´b\n") == "a'b\n");
  CHECK(normalize("‚x‘\n") == "'x'\n");
  CHECK(normalize("wait…\n") == "wait...\n");
  // -penn keeps ` and '' (then only the later '' -> " applies).
  CHECK(normalize("`a''\n", "en", true) == "`a\"\n");
  // ´´ becomes '' and then ", through the ´ -> ' rule.
  CHECK(normalize("´´x\n") == "\"x\n");
}

TEST_CASE("normalize-punctuation: ’ between ASCII letters is an apostrophe, elsewhere a double quote",
          "[normalize_punctuation]") {
  CHECK(normalize("don’t\n") == "don't\n");
  CHECK(normalize("DON’T\n") == "DON'T\n");
  CHECK(normalize("’quoted’\n") == "\"quoted\"\n");
  CHECK(normalize("l‘a\n") == "l'a\n");
  // Matches do not overlap: the b of a’b is used up, so the second ’ is a quote.
  CHECK(normalize("a’b’c\n") == "a'b\"c\n");
  // Only ASCII letters: ä’s keeps the quote reading.
  CHECK(normalize("ä’s\n") == "ä\"s\n");
}

TEST_CASE("normalize-punctuation: French quotes and NBSP pseudo-spaces", "[normalize_punctuation]") {
  CHECK(normalize("dit\u00A0«\u00A0oui\u00A0»\u00A0non\n", "fr") == "dit \"oui\" non\n");
  CHECK(normalize("«\u00A0a»\n", "fr") == "\"a\"\n");
  CHECK(normalize("x\u00A0» y\n", "fr") == "x\" y\n");
  CHECK(normalize("10\u00A0% a\u00A0: b\u00A0? c\u00A0! d\u00A0;\n", "fr") == "10% a: b? c! d;\n");
  CHECK(normalize("nº\u00A05 20\u00A0ºC 3\u00A0cm\n") == "nº 5 20 ºC 3 cm\n");
  CHECK(normalize("a,\u00A0b\n") == "a, b\n");
  // Other NBSPs stay.
  CHECK(normalize("a\u00A0b\n") == "a\u00A0b\n");
}

TEST_CASE("normalize-punctuation: language quote styles", "[normalize_punctuation]") {
  // English: the quote moves after commas and periods.
  CHECK(normalize("say \"hi\". ok \"x\",. y\n", "en") == "say \"hi.\" ok \"x,.\" y\n");
  // Czech: neither rule.
  CHECK(normalize("\"hi\". a,\" b\n", "cs") == "\"hi\". a,\" b\n");
  // Other (de): ," -> ", and the quote moves before a run of periods when a byte other than '<'
  // follows, the record's '\n' included ...
  CHECK(normalize("a,\" b\n", "de") == "a\", b\n");
  CHECK(normalize("ende...\" weiter\n", "de") == "ende\"... weiter\n");
  CHECK(normalize("Ende.\"\n", "de") == "Ende\".\n");
  // ... but not at the very end of a record without '\n', nor before '<'.
  CHECK(normalize("Ende.\"", "de") == "Ende.\"");
  CHECK(normalize("a.\"<b\n", "de") == "a.\"<b\n");
  // Spaces then '<': backtracking hands the last space to [^<].
  CHECK(normalize("a.\" <b\n", "de") == "a\". <b\n");
  // The byte after the quote is used up: no second move for the next dots.
  CHECK(normalize("a.\".\"x\n", "de") == "a\"..\"x\n");
  // Unknown languages take the "other" branch.
  CHECK(normalize("a,\" b\n", "it") == "a\", b\n");
}

TEST_CASE("normalize-punctuation: NBSP between digits by language", "[normalize_punctuation]") {
  for (std::string comma_language : {"de", "es", "fr", "cs", "cz"})
    CHECK(normalize("1\u00A0000\n", comma_language) == "1,000\n");
  for (std::string period_language : {"en", "it"}) CHECK(normalize("1\u00A0000\n", period_language) == "1.000\n");
  // Non-overlapping: the middle digit is used up by the first match.
  CHECK(normalize("1\u00A02\u00A03\n", "de") == "1,2\u00A03\n");
  CHECK(normalize("12\u00A0345\u00A0678\n", "en") == "12.345.678\n");
}

TEST_CASE("normalize-punctuation: records keep their line ending", "[normalize_punctuation]") {
  CHECK(normalize("") == "");
  CHECK(normalize("\n") == "\n");
  CHECK(normalize("last line") == "last line");
}
