// Byte-exact checks of the Moses tokenizer port against tokenizer.perl's outputs
// (docs/mt-tools.md §2.1-§2.3; vectors/own/moses/ and vectors/upstream/wmt17-en-de/).
#include <catch.hpp>

#include "data/moses_tokenizer.hpp"
#include "data/text_io.hpp"
#include "moses_vectors.hpp"

using attn::data::MosesLanguage;
using attn::data::MosesTokenizer;
using attn::data::MosesTokenizerOptions;
using attn::test::check_records;

namespace {

void check_tokenizer(const std::string& input, const std::string& expected, MosesTokenizerOptions options) {
  MosesTokenizer tokenizer(options);
  check_records(input, expected, [&](std::string_view record) { return tokenizer.tokenize_record(record); });
}

MosesTokenizerOptions options_for(MosesLanguage language, bool aggressive, bool escape = true, bool legacy = false) {
  MosesTokenizerOptions options;
  options.language = language;
  options.aggressive_hyphen_splitting = aggressive;
  options.escape = escape;
  options.legacy2018 = legacy;
  return options;
}

}  // namespace

TEST_CASE("Moses tokenizer matches tokenizer.perl on the own edge and corpus files", "[moses]") {
  for (auto [code, language] : {std::pair{"en", MosesLanguage::English}, std::pair{"de", MosesLanguage::German}}) {
    for (std::string file : {"edge", "corpus"}) {
      std::string input = "own/moses/" + file + "." + code;
      SECTION(input) {
        check_tokenizer(input, input + ".tok", options_for(language, false));
        check_tokenizer(input, input + ".tok-a", options_for(language, true));
        check_tokenizer(input, input + ".tok-a-legacy2018", options_for(language, true, true, true));
        if (file == "edge") check_tokenizer(input, input + ".tok-a-noescape", options_for(language, true, false));
      }
    }
  }
}

TEST_CASE("Moses tokenizer matches tokenizer.perl -a -l de on the 17 WMT17 files", "[moses]") {
  const char* systems[] = {
      "C-3MA.4959.en-de",     "FBK.4870.en-de",          "KIT.4950.en-de",
      "LIUM-NMT.4900.en-de",  "LMU-nmt-reranked.4934.en-de", "LMU-nmt-single.4893.en-de",
      "PROMT-Rule-based.4735.en-de", "RWTH-nmt-ensemble.4921.en-de", "SYSTRAN.4847.en-de",
      "TALP-UPC.4834.en-de",  "online-A.0.en-de",        "online-B.0.en-de",
      "online-F.0.en-de",     "online-G.0.en-de",        "ref.de",
      "uedin-nmt.4722.en-de", "xmu.4910.en-de"};
  for (const char* system : systems) {
    std::string name = std::string("newstest2017.") + system;
    SECTION(name) {
      check_tokenizer("upstream/wmt17-en-de/raw/" + name, "upstream/wmt17-en-de/tok-a/" + name,
                      options_for(MosesLanguage::German, true));
    }
  }
  SECTION("legacy2018 reference") {
    check_tokenizer("upstream/wmt17-en-de/raw/newstest2017.ref.de",
                    "upstream/wmt17-en-de/newstest2017.ref.de.tok-a-legacy2018",
                    options_for(MosesLanguage::German, true, true, true));
  }
}

TEST_CASE("Moses tokenizer: line loop and single rules", "[moses]") {
  MosesTokenizer english(options_for(MosesLanguage::English, true));
  MosesTokenizer legacy(options_for(MosesLanguage::English, true, true, true));
  SECTION("a blank record is printed unchanged, others always end in a newline") {
    CHECK(english.tokenize_record(" \t\xC2\xA0\n") == " \t\xC2\xA0\n");
    CHECK(english.tokenize_record("   ") == "   ");
    CHECK(english.tokenize_record("end.") == "end .\n");
    CHECK(english.tokenize("So am I.\n") == "So am I .");
  }
  SECTION("the final period of the last word") {
    CHECK(english.tokenize("He lives in the U.S.") == "He lives in the U.S .");
    CHECK(legacy.tokenize("He lives in the U.S.") == "He lives in the U.S.");
    CHECK(legacy.tokenize("So am I.") == "So am I.");  // "I" is a non-breaking prefix
    CHECK(legacy.tokenize("We are done.") == "We are done .");
  }
  SECTION("text containing the multi-dot placeholder is corrupted as in Perl") {
    CHECK(english.tokenize("Literal DOTMULTI and DOTDOTMULTI") == "Literal . and ..");
    CHECK(english.tokenize("a....b") == "a .... b");
  }
  SECTION("runs of dots and placeholder text end as the script's substitution loops leave them") {
    // tokenizer.perl -l en's outputs. In "DOTMULTI.DOTMULTI.x" the first substitution of the
    // loop consumes the second placeholder's D, so that one gets no space before the x.
    CHECK(english.tokenize("Wait.. what....x") == "Wait .. what .... x");
    CHECK(english.tokenize("DOTMULTI.DOTMULTI.x") == ".. ..x");
    CHECK(english.tokenize("DOTMULTI.DOTMULTI.DOTMULTI.x") == ".. .... x");
    CHECK(english.tokenize("DOTMULTI..DOTMULTI.x") == ". .. ..x");
    CHECK(english.tokenize("DOTDOTDOTMULTI y") == "... y");
  }
  SECTION("a run of 100,000 dots stays one token (the script's loops take one pass per dot)") {
    const std::string dots(100000, '.');
    CHECK(english.tokenize("a" + dots + "b") == "a " + dots + " b");
    CHECK(english.tokenize(dots) == dots);
  }
}

TEST_CASE("Moses tokenizer rejects invalid UTF-8", "[moses]") {
  MosesTokenizer tokenizer;
  CHECK_THROWS_AS(tokenizer.tokenize("bad \xC3\x28 byte"), attn::data::DataError);
  CHECK_THROWS_WITH(tokenizer.tokenize("bad \xC3\x28 byte"), Catch::Contains("invalid UTF-8 at byte 5"));
}

TEST_CASE("Moses tokenizer: character classes are Perl's Unicode 14 ones", "[moses]") {
  // Unicode 15 (ICU) made U+0F82 and U+0C04 Alphabetic and U+A7F2, U+10FC, U+AB69 Lowercase;
  // tokenizer.perl -l en (Perl 5.36) pads the marks and does not see a lowercase next word.
  MosesTokenizer english;
  CHECK(english.tokenize("a\xE0\xBE\x82" "b \xE0\xB0\x84x") == "a \xE0\xBE\x82 b \xE0\xB0\x84 x");
  CHECK(english.tokenize("Hello. \xEA\x9F\xB2x end") == "Hello . \xEA\x9F\xB2x end");
  CHECK(english.tokenize("Hello. \xE1\x83\xBCx end") == "Hello . \xE1\x83\xBCx end");
  CHECK(english.tokenize("Hello. \xEA\xAD\xA9x end") == "Hello . \xEA\xAD\xA9x end");
}

TEST_CASE("Moses tokenizer: the character rules of other languages", "[moses]") {
  // tokenizer.perl -l LANG's outputs (none of these lines depends on the prefix lists).
  auto tokenize = [](const char* code, std::string_view line) {
    return MosesTokenizer({.language = attn::data::parse_moses_language(code)}).tokenize(line);
  };
  SECTION("fr, it, ga: elisions split to the left") {
    CHECK(tokenize("fr", "L'homme qu'il a vu aujourd'hui, c'est 'ça'") ==
          "L&apos; homme qu&apos; il a vu aujourd&apos; hui , c&apos; est &apos; ça&apos;");
    CHECK(tokenize("it", "Dell'arte e l'anno '90") == "Dell&apos; arte e l&apos; anno &apos; 90");
    CHECK(tokenize("ga", "go dtí an t-siopa 'nois") == "go dtí an t-siopa &apos; nois");
  }
  SECTION("fi, sv: a colon before a lowercase letter stays in the word") {
    CHECK(tokenize("fi", "EU:ssa ja USA:n 20:een S:t kello 3:30 EU: loppu:") ==
          "EU:ssa ja USA:n 20:een S:t kello 3 : 30 EU : loppu :");
    CHECK(tokenize("sv", "S:t Eriks gata EU:s budget: stor") == "S:t Eriks gata EU:s budget : stor");
  }
  SECTION("ca: the script's middle dot is the two characters U+00C2 U+00B7") {
    CHECK(tokenize("ca", "il·lusió col·lecció a·B Â·b Â·B Âx l'home") ==
          "il·lusió col·lecció a·B Â·b Â· B Âx l&apos; home");
  }
  SECTION("so, tdt: an apostrophe between letters stays") {
    CHECK(tokenize("so", "ba'an 'Soomaali' ka'") == "ba&apos;an &apos; Soomaali &apos; ka&apos;");
    CHECK(tokenize("tdt", "ba'a 'Ita ema'Nia' rua'") == "ba&apos;a &apos; Ita ema &apos; Nia &apos; rua &apos;");
  }
}

TEST_CASE("Moses tokenizer: the non-breaking prefix list of the -l language", "[moses]") {
  // tokenizer.perl -q -l LANG's outputs; each line keeps or splits final periods by LANG's
  // own list, and differs from what the English list gives.
  struct Case {
    const char* code;
    std::string_view line, expected;
  };
  const Case cases[] = {
      {"fr", "M. Dupont et Mme. Durand, voir p. 5 et av. J.-C. Fin.",
       "M. Dupont et Mme . Durand , voir p. 5 et av. J.-C. Fin ."},
      // es, pt, nl have the default rules (Other) and lists of their own; pt's "No" and nl's
      // "Nr" are numeric-only, and so is pt's "Art" (its line "Art #NUMERIC_ONLY#" comes after
      // a plain "Art", and the later line wins).
      {"es", "El Sr. Gómez y la Sra. López, pág. 12. Fin.", "El Sr. Gómez y la Sra. López , pág. 12 . Fin ."},
      {"pt", "Ver No. 5 e No. Lisboa, Art. Sete e Sra. Costa.", "Ver No. 5 e No . Lisboa , Art . Sete e Sra. Costa ."},
      {"nl", "Zie Nr. 5 en Nr. Amsterdam, blz. Tien.", "Zie Nr. 5 en Nr . Amsterdam , blz . Tien ."},
      {"it", "Il Sig. Rossi e la Dott. Bianchi, Art. 7 e Art. Roma.",
       "Il Sig. Rossi e la Dott. Bianchi , Art. 7 e Art . Roma ."},
      {"ga", "Féach uimh. 4 agus uimh. Seán, lch. 9 agus lch. X.",
       "Féach uimh. 4 agus uimh . Seán , lch. 9 agus lch . X ."},
      {"ca", "El Sr. Puig i la Sra. Vila, pàg. 3.", "El Sr. Puig i la Sra. Vila , pàg. 3 ."},
      {"cs", "Viz str. 5 a čl. Praha, prof. Novák.", "Viz str . 5 a čl . Praha , prof. Novák ."},
      {"pl", "Zob. nr 5, nr. 7 i nr. Kraków, ul. Długa, prof. Nowak.",
       "Zob. nr 5 , nr. 7 i nr . Kraków , ul. Długa , prof. Nowak ."},
      {"ru", "Г. Москва, ул. Ленина, т. е. Пушкин.", "Г. Москва , ул. Ленина , т. е. Пушкин ."},
      {"el", "Ο κ. Παπαδόπουλος και η κα. Νίκου.", "Ο κ. Παπαδόπουλος και η κα. Νίκου ."},
      {"fi", "Ks. Helsinki ja esim. Turku, huom. Tämä.", "Ks . Helsinki ja esim. Turku , huom. Tämä ."},
      // The sv file's line "Ö" ends in two spaces, so "Ö." is split: the lists are used as
      // they are, trailing spaces included.
      {"sv", "Se s. Stockholm och ca. Tio, jfr. EU:s plan, Ö. Ek.",
       "Se s. Stockholm och ca . Tio , jfr. EU:s plan , Ö . Ek ."},
      {"hu", "Jan. 5 és Jan. Péter, dr. Kovács.", "Jan. 5 és Jan . Péter , dr. Kovács ."},
      {"hi", "डॉ. शर्मा और श्री. वर्मा।", "डॉ. शर ् मा और श ् री . वर ् मा ।"},
      {"zh", "No. 5 and No. Beijing, Art. 3 and Mr. Wang.", "No. 5 and No . Beijing , Art . 3 and Mr . Wang ."},
      {"tdt", "Sr. Xanana ho Sra. Ramos, Art. 5 no Art. Díli.", "Sr. Xanana ho Sra. Ramos , Art. 5 no Art . Díli ."},
      // Codes without a list use the English one, rules or not.
      {"en", "Mr. Smith, No. 5 and No. Y, Sra. López.", "Mr. Smith , No. 5 and No . Y , Sra . López ."},
      {"so", "Mr. Smith, No. 5 and No. Y, Sra. López.", "Mr. Smith , No. 5 and No . Y , Sra . López ."},
      {"ko", "Mr. Smith, No. 5 and No. Y, Sra. López.", "Mr. Smith , No. 5 and No . Y , Sra . López ."},
      {"xx", "Mr. Smith, No. 5 and No. Y, Sra. López.", "Mr. Smith , No. 5 and No . Y , Sra . López ."},
  };
  for (const Case& c : cases) {
    INFO(c.code << ": " << c.line);
    MosesTokenizer tokenizer({.language = attn::data::parse_moses_language(c.code), .prefix_language = c.code});
    CHECK(tokenizer.tokenize(c.line) == c.expected);
  }
  SECTION("without a prefix_language, a language with rules of its own uses its list") {
    MosesTokenizer french({.language = MosesLanguage::French});
    CHECK(french.tokenize("M. Dupont et Mme. Durand") == "M. Dupont et Mme . Durand");
  }
}

TEST_CASE("Moses non-breaking prefixes: every list of mosesdecoder 3445289 is built in", "[moses]") {
  using attn::data::NonbreakingPrefixes;
  // The number of distinct keys tokenizer.perl's load_prefixes makes of each file.
  const std::pair<const char*, size_t> key_counts[] = {
      {"as", 27},  {"bn", 27},  {"ca", 75},   {"cs", 348}, {"de", 298},  {"el", 1564}, {"en", 105}, {"es", 110},
      {"et", 124}, {"fi", 124}, {"fr", 144},  {"ga", 45},  {"gu", 64},   {"hi", 73},   {"hu", 87},  {"is", 245},
      {"it", 163}, {"kn", 30},  {"lt", 365},  {"lv", 86},  {"ml", 28},   {"mni", 27},  {"mr", 72},  {"nl", 96},
      {"or", 37},  {"pa", 61},  {"pl", 279},  {"pt", 182}, {"ro", 38},   {"ru", 279},  {"sk", 470}, {"sl", 76},
      {"sv", 91},  {"ta", 31},  {"tdt", 183}, {"te", 30},  {"yue", 39},  {"zh", 39}};
  CHECK(NonbreakingPrefixes::builtin_languages().size() == std::size(key_counts));
  for (auto [code, count] : key_counts) {
    INFO(code);
    CHECK(NonbreakingPrefixes::has_builtin(code));
    CHECK(NonbreakingPrefixes::builtin(code).size() == count);
  }
  // Codes are matched exactly, as file names are.
  CHECK_FALSE(NonbreakingPrefixes::has_builtin("FR"));
  CHECK_FALSE(NonbreakingPrefixes::has_builtin("so"));
  CHECK(&NonbreakingPrefixes::builtin("FR") == &NonbreakingPrefixes::builtin("en"));
  // hu: month abbreviations are numeric-only; pt's "No #NUMERIC_ONLY# " line has a trailing space.
  CHECK(NonbreakingPrefixes::builtin("hu").kind("Szept") == attn::data::PrefixKind::NumericOnly);
  CHECK(NonbreakingPrefixes::builtin("pt").kind("No") == attn::data::PrefixKind::NumericOnly);
  CHECK(NonbreakingPrefixes::builtin("sv").kind("Ö") == attn::data::PrefixKind::None);
}
