// BPE application against subword-nmt's own output (docs/mt-tools.md §1.2–§1.4):
// vectors/own/bpe/, vectors/upstream/subword-nmt-tests/ and vectors/upstream/wmt17-en-de/bpe/.
#include <catch.hpp>

#include <algorithm>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "data/bpe_apply.hpp"
#include "test_support.hpp"

using namespace attn::data;
using attn::test::read_file;
using attn::test::vector_path;

namespace {

const std::string kOwn = vector_path("own/bpe/");
const std::string kUpstream = vector_path("upstream/");

std::string apply_file(const std::string& codes, const std::string& input, BpeApplyOptions options = {},
                       LineMode mode = LineMode::Universal, int64_t merges = -1) {
  BpeEncoder encoder(BpeCodes::read(codes, merges), std::move(options));
  return encoder.apply(split_lines(read_utf8_file(input), mode));
}

BpeApplyOptions with_vocabulary(const std::string& path, int64_t threshold) {
  BpeApplyOptions options;
  options.vocabulary = read_bpe_vocabulary(path, threshold);
  return options;
}

// subword-nmt's merge loop written plainly on strings (v0.2 codes): rescan the word for
// the pair of lowest rank, merge its occurrences left to right, repeat.
std::vector<std::string> rescanning_bpe(const std::string& word, const std::map<std::pair<std::string, std::string>, size_t>& ranks) {
  std::vector<std::string> symbols;
  for (char c : word) symbols.emplace_back(1, c);
  symbols.back() += "</w>";
  for (;;) {
    const std::pair<std::string, std::string>* best = nullptr;
    size_t best_rank = SIZE_MAX;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto found = ranks.find({symbols[i], symbols[i + 1]});
      if (found != ranks.end() && found->second < best_rank) best = &found->first, best_rank = found->second;
    }
    if (best == nullptr) break;
    const std::pair<std::string, std::string> pair = *best;
    std::vector<std::string> merged;
    for (size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size() && symbols[i] == pair.first && symbols[i + 1] == pair.second) {
        merged.push_back(symbols[i] + symbols[i + 1]);
        ++i;
      } else {
        merged.push_back(symbols[i]);
      }
    }
    symbols = std::move(merged);
  }
  symbols.back().resize(symbols.back().size() - (symbols.back().ends_with("</w>") ? 4 : 0));
  return symbols;
}

}  // namespace

TEST_CASE("apply_bpe: the queued merges equal the rescanning loop on random codes and words") {
  std::mt19937 random(7);
  auto pick = [&](size_t n) { return size_t(random() % n); };
  for (int trial = 0; trial < 20; ++trial) {
    // Codes as learning makes them: each merges two symbols that exist (letters, with or
    // without </w>, and earlier merges); pairs of equal symbols make overlaps common.
    std::vector<std::string> inner = {"a", "b", "c"}, final = {"a</w>", "b</w>", "c</w>"};
    std::map<std::pair<std::string, std::string>, size_t> ranks;
    std::string codes = "#version: 0.2\n";
    for (size_t rank = 0; rank < 40; ++rank) {
      const std::string left = inner[pick(inner.size())];
      const bool at_end = pick(3) == 0;
      const std::string right = at_end ? final[pick(final.size())] : inner[pick(inner.size())];
      if (!ranks.try_emplace({left, right}, rank).second) continue;
      codes += left + " " + right + "\n";
      (at_end ? final : inner).push_back(left + right);
    }
    BpeEncoder encoder(BpeCodes::parse(codes, "random.codes"), {});
    for (int w = 0; w < 200; ++w) {
      std::string word;
      for (size_t length = 2 + pick(40); word.size() < length;) word += "abc"[pick(pick(4) == 0 ? 3 : 2)];
      INFO(codes << "word " << word);
      CHECK(encoder.segment_word(word) == rescanning_bpe(word, ranks));
    }
  }
}

TEST_CASE("apply_bpe: a 1 MB word is segmented as its pieces are (no quadratic merge loop)") {
  // Corpus words joined by '|', which is in no code: merges never cross it, so the long word
  // segments into each piece's segmentation followed by '|' (the final piece as a word end).
  // The rescanning loop needed minutes here (one pass over the word per merge applied).
  const BpeEncoder encoder(BpeCodes::read(kOwn + "codes.200"), {});
  std::string corpus = read_utf8_file(kOwn + "corpus.tok.en");
  std::replace(corpus.begin(), corpus.end(), '\n', ' ');
  const std::vector<std::string_view> words = split_words(corpus);
  std::string long_word;
  std::vector<std::string> expected;
  for (size_t i = 0; long_word.size() < (1u << 20); ++i) {
    const std::string piece = std::string(words[i % words.size()]) + "|";
    long_word += piece;
    for (std::string& subword : encoder.segment_word(piece)) expected.push_back(std::move(subword));
  }
  long_word += "end";
  for (std::string& subword : encoder.segment_word("end")) expected.push_back(std::move(subword));
  CHECK(encoder.segment_word(long_word) == expected);
}

TEST_CASE("apply_bpe: the 401-line corpus with codes.200") {
  CHECK(apply_file(kOwn + "codes.200", kOwn + "corpus.tok.en") == read_file(kOwn + "corpus.bpe200.en"));
  CHECK(apply_file(kOwn + "codes.200", kOwn + "corpus.tok.de") == read_file(kOwn + "corpus.bpe200.de"));
}

TEST_CASE("apply_bpe: held-out words, --merges 50, glossaries, vocabulary threshold") {
  const std::string codes = kOwn + "codes.200", heldout = kOwn + "heldout.tok";
  CHECK(apply_file(codes, heldout) == read_file(kOwn + "heldout.bpe200"));
  CHECK(apply_file(codes, heldout, {}, LineMode::Universal, 50) == read_file(kOwn + "heldout.bpe200.merges50"));
  BpeApplyOptions glossaries;
  glossaries.glossaries = {"New", "York", "[0-9]+", "Wort"};
  CHECK(apply_file(codes, heldout, glossaries) == read_file(kOwn + "heldout.bpe200.glossaries"));
  CHECK(apply_file(codes, heldout, with_vocabulary(kOwn + "joint.vocab.en", 3)) ==
        read_file(kOwn + "heldout.bpe200.vocab-en-thr3"));
}

TEST_CASE("apply_bpe: vocabulary filter on the corpus (joint vocabularies, threshold 3)") {
  CHECK(apply_file(kOwn + "codes.200", kOwn + "corpus.tok.en", with_vocabulary(kOwn + "joint.vocab.en", 3)) ==
        read_file(kOwn + "corpus.bpe200.vocab-en-thr3.en"));
  CHECK(apply_file(kOwn + "codes.200", kOwn + "corpus.tok.de", with_vocabulary(kOwn + "joint.vocab.de", 3)) ==
        read_file(kOwn + "corpus.bpe200.vocab-de-thr3.de"));
}

TEST_CASE("apply_bpe: synthetic codes (overlaps, end of word, duplicates, whitespace kept)") {
  CHECK(apply_file(kOwn + "synthetic.codes", kOwn + "synthetic.in") == read_file(kOwn + "synthetic.out"));
  CHECK(apply_file(kOwn + "synthetic.codes", kOwn + "synthetic.in", with_vocabulary(kOwn + "synthetic.vocab", 2)) ==
        read_file(kOwn + "synthetic.vocab-thr2.out"));
}

TEST_CASE("apply_bpe: line splitting differs between standard input and -i FILE") {
  const std::string codes = kOwn + "codes.200", input = kOwn + "whitespace-edge.in";
  CHECK(apply_file(codes, input, {}, LineMode::Universal) == read_file(kOwn + "whitespace-edge.bpe200.stdin-mode"));
  CHECK(apply_file(codes, input, {}, LineMode::SplitLines) == read_file(kOwn + "whitespace-edge.bpe200.file-mode"));
}

TEST_CASE("apply_bpe: subword-nmt's own test corpus") {
  const std::string dir = kUpstream + "subword-nmt-tests/";
  CHECK(apply_file(dir + "bpe.ref", dir + "corpus.en", {}, LineMode::SplitLines) == read_file(dir + "corpus.bpe.ref.en"));
}

TEST_CASE("apply_bpe: subword-nmt's unit cases (glossaries, whitespace)") {
  const std::string dir = kUpstream + "subword-nmt-tests/";
  auto cases = nlohmann::json::parse(read_file(dir + "unit_cases.json"));
  for (const auto& c : cases["isolate_glossary(word, 'like')"])
    CHECK(isolate_glossary(c["word"].get<std::string>(), GlossaryPattern("like")) ==
          c["expected"].get<std::vector<std::string>>());
  BpeCodes codes = BpeCodes::read(dir + "bpe.ref");
  for (const auto& c : cases["BPE(glossaries=[...])._isolate_glossaries(word)"]) {
    BpeApplyOptions options;
    options.glossaries = c["glossaries"].get<std::vector<std::string>>();
    CHECK(BpeEncoder(codes, options).isolate_glossaries(c["word"].get<std::string>()) ==
          c["expected"].get<std::vector<std::string>>());
  }
  BpeEncoder plain(codes, {});
  for (const auto& c : cases["BPE(codes=tests/data/bpe.ref).process_line(line)"])
    CHECK(plain.process_line(c["line"].get<std::string>()) == c["expected"].get<std::string>());
  for (const auto& c : cases["README glossary example (codes=tests/data/bpe.ref)"]) {
    BpeApplyOptions options;
    options.glossaries = c["glossaries"].get<std::vector<std::string>>();
    CHECK(BpeEncoder(codes, options).process_line(c["line"].get<std::string>()) == c["expected"].get<std::string>());
  }
}

TEST_CASE("apply_bpe: glossaries match words of 100,000 characters, with Python's syntax") {
  // std::regex recursed once per character of a match: both crashed with a stack overflow.
  const std::string letters(30000, 'a'), tag = "<" + std::string(100000, 'a') + ">";
  CHECK(isolate_glossary(letters, GlossaryPattern("a+")) == std::vector<std::string>{letters});
  CHECK(isolate_glossary("x" + tag + "y", GlossaryPattern("<[^>]*>")) == std::vector<std::string>{"x", tag, "y"});
  BpeApplyOptions options;
  options.glossaries = {"a+"};
  CHECK(BpeEncoder(BpeCodes::read(kOwn + "codes.200"), options).segment_word(letters) ==
        std::vector<std::string>{letters});
  // Lookbehind is Python's (re.split('((?<=a)b)', 'abab')); ECMAScript has none.
  CHECK(isolate_glossary("abab", GlossaryPattern("(?<=a)b")) == std::vector<std::string>{"a", "b", "a", "b"});
}

TEST_CASE("apply_bpe: glossaries mean what they mean to Python's re where ICU reads them otherwise") {
  // Expected pieces from upstream isolate_glossary(word, glossary) (Python 3.11).
  using Pieces = std::vector<std::string>;
  auto isolate = [](const std::string& word, const std::string& glossary) {
    return isolate_glossary(word, GlossaryPattern(glossary));
  };
  CHECK(isolate("a\u0301b", "\\w+") == Pieces{"a", "\u0301", "b"});  // a combining mark is no word character
  CHECK(isolate("a\u00b2b", "[\\w]+") == Pieces{"a\u00b2b"});          // '²' has a numeric value: it is one
  CHECK(isolate("a\x1c" "b", "\\s") == Pieces{"a", "\x1c", "b"});       // U+001C is a space to Python
  CHECK(isolate("a\x0c" "b\x0b" "c", "\\v") == Pieces{"a\x0c" "b", "\x0b", "c"});  // \v is U+000B only
  CHECK(isolate("ba\u0301b", "\\bb") == Pieces{"b", "a\u0301", "b"});  // a word boundary after the mark
  CHECK(isolate("ab\u0301", "b\\B") == Pieces{"ab\u0301"});
  CHECK(isolate("xa{y", "a{") == Pieces{"x", "a{", "y"});           // '{' without a count is a character
  CHECK(isolate("aaab", "a{,2}") == Pieces{"aa", "a", "b"});        // {,n} counts from 0
  CHECK(isolate("x:a[b", "[[:alpha:]]") == Pieces{"x:a[b"});        // no POSIX classes: '[' ':' 'a' ... then ']'
  CHECK(isolate("a-b&c", "[&-]") == Pieces{"a", "-", "b", "&", "c"});
  CHECK(isolate("abc", "\\x62") == Pieces{"a", "b", "c"});
  // Patterns Python refuses (the glossary always follows '^' or '(', so flags for the whole
  // pattern are misplaced; \1 inside '(' + glossary + ')' refers to that open group).
  for (const char* refused : {"(?i)a", "\\p{L}", "(a)\\1", "(?<n>a)", "\\Q"})
    CHECK_THROWS_WITH(GlossaryPattern(refused), Catch::Contains("--glossaries"));
}

TEST_CASE("apply_bpe: a glossary that backtracks without end is an error naming it") {
  // (a+)+c tries every split of the a's: 2^25 on 25 letters (seconds; twice as long per letter).
  const std::string word(25, 'a');
  CHECK_THROWS_WITH(isolate_glossary(word, GlossaryPattern("(a+)+c")),
                    Catch::Contains("--glossaries '(a+)+c'") && Catch::Contains("25 bytes") &&
                        Catch::Contains("backtracking steps"));
  // A group nested 50 deep, repeated, needs about 1 KB of backtracking stack per repeat.
  const std::string nested = std::string(50, '(') + "ab" + std::string(50, ')') + "+";
  std::string pairs;
  for (int i = 0; i < 100000; ++i) pairs += "ab";
  CHECK_THROWS_WITH(isolate_glossary(pairs, GlossaryPattern(nested)), Catch::Contains("backtracking stack"));
  // Raised on the threads of apply(): the error, not std::terminate.
  BpeApplyOptions options;
  options.glossaries = {"(a+)+c"};
  std::string text;
  for (int line = 0; line < 4; ++line) text += "b " + word + "\n";
  CHECK_THROWS_AS(BpeEncoder(BpeCodes::read(kOwn + "codes.200"), options).apply(split_lines(text, LineMode::Universal)),
                  DataError);
}

TEST_CASE("apply_bpe: WMT17 newstest2017 reference with 3000 and 39,620 merges") {
  const std::string input = kUpstream + "wmt17-en-de/tok-a/newstest2017.ref.de";
  const std::string dir = kUpstream + "wmt17-en-de/bpe/";
  CHECK(apply_file(dir + "codes.3000", input) == read_file(dir + "newstest2017.ref.de.tok-a.bpe3000"));
  CHECK(apply_file(dir + "codes.40000-minfreq2-stopped", input) == read_file(dir + "newstest2017.ref.de.tok-a.bpe40000"));
}

TEST_CASE("BpeCodes: v0.1 codes (no header) keep </w> as a separate symbol") {
  BpeEncoder encoder(BpeCodes::parse("a b\nab </w>\n", "v01"), {});
  CHECK(encoder.process_line("ab abc\n") == "ab ab@@ c\n");  // upstream apply_bpe.py output
}

TEST_CASE("BpeCodes: malformed codes files name file and line") {
  CHECK_THROWS_WITH(BpeCodes::parse("#version: 0.2\ne r\nbad\n", "codes.txt"), Catch::Contains("codes.txt:3:"));
  CHECK_THROWS_WITH(BpeCodes::parse("#version: 0.2\ne r\na b c\n", "codes.txt"), Catch::Contains("codes.txt:3:"));
  CHECK_THROWS_WITH(BpeCodes::parse("e r\n\nx y\n", "codes.txt"), Catch::Contains("codes.txt:2:"));
  CHECK_THROWS_WITH(BpeCodes::parse("#version: 0.3\ne r\n", "codes.txt"), Catch::Contains("codes.txt:1:"));
  CHECK_THROWS_WITH(BpeCodes::parse("#version: 0.2 byte\ne r\n", "codes.txt"), Catch::Contains("byte-level"));
  CHECK_THROWS_AS(BpeCodes::read("/nonexistent/codes"), DataError);
  // --merges: lines after the limit are not read, so their errors do not count.
  CHECK_NOTHROW(BpeCodes::parse("#version: 0.2\ne r\nbad\n", "codes.txt", 1));
  CHECK_THROWS_WITH(parse_bpe_vocabulary("a 1\nb\n", "vocab.txt", 1), Catch::Contains("vocab.txt:2:"));
  CHECK_THROWS_WITH(GlossaryPattern("(unclosed"), Catch::Contains("--glossaries '(unclosed': invalid regex"));
}
