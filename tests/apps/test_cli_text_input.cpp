// End-to-end tests of the text tools (README.md "Commands", "Preparing data" and its limits on
// hostile input) on input and flags built to break them: numbers beyond every sensible bound
// (thread counts, seeds, sizes, the padding factor, BLEU's smoothing value), words and
// segments hundreds of thousands of characters long, regexes that backtrack without end,
// malformed SGML and dictionaries. Each must end in a clear error naming the flag, file or
// line — exit code 2 (a command-line error) or 1 ("attnlab: error: ...") — or in the right
// output within seconds: never a signal, a hang, or output that silently means something else.
#include <catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.hpp"

using namespace attn::test;
namespace fs = std::filesystem;

namespace {

// Well above what the runs below take (a fraction of a second) on a loaded machine, and well
// below what the quadratic or exponential code they replaced took (half a minute to hours).
constexpr double kFastSeconds = 10;

// run_attnlab, requiring the run to take less than kFastSeconds.
CommandResult run_fast(const TempDir& dir, const std::vector<std::string>& args,
                       const std::string& input = "/dev/null") {
  const auto start = std::chrono::steady_clock::now();
  CommandResult result = run_attnlab(dir, args, input);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("attnlab " << args.front() << " took " << seconds << " s");
  CHECK(seconds < kFastSeconds);
  return result;
}

// A file of `dir` holding `text`, by its path.
std::string input_file(const TempDir& dir, const std::string& name, const std::string& text) {
  return write_file(dir.dir / name, text);
}

}  // namespace

TEST_CASE("thread counts beyond 1024 are command-line errors naming the flag, not a crash of the thread library") {
  TempDir dir;
  const std::string text = input_file(dir, "in.txt", "Hello, world.\n");
  for (const char* count : {"0", "1025", "2147483647"}) {
    INFO(count);
    require_command_line_error(run_attnlab(dir, {"tokenize", "-j", count}, text), "--threads");
  }
  // 100,000 crashed each of them (signal 11).
  require_command_line_error(run_attnlab(dir, {"detokenize", "-j", "100000"}, text), "--threads");
  require_command_line_error(
      run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", "train", "--workers", "100000"}),
      "--workers");
  require_command_line_error(run_attnlab(dir, {"train", "data-bin", "--threads", "100000"}), "--threads");
  require_command_line_error(run_attnlab(dir, {"generate", "data-bin", "--path", "model", "--threads", "100000"}),
                             "--threads");
  const CommandResult most = run_fast(dir, {"tokenize", "-j", "1024"}, text);
  require_success(most);
  CHECK(most.out == "Hello , world .\n");
}

TEST_CASE("integers out of their flag's range are command-line errors naming the flag, not wrapped or saturated") {
  TempDir dir;
  const std::string text = input_file(dir, "in.txt", "a b\n");
  // Unsigned flags: "-1" would read as 2^64 - 1, and numbers beyond 2^64 as 2^64 - 1.
  for (const char* value : {"-1", "99999999999999999999999"}) {
    INFO(value);
    require_command_line_error(run_attnlab(dir, {"prepare", "ding", "--out", "ding", "--seed", value}), "--seed");
    require_command_line_error(run_attnlab(dir, {"clean-corpus", "corpus", "en", "de", "out", "1", value}), "max");
  }
  require_command_line_error(run_attnlab(dir, {"prepare", "ding", "--out", "ding", "--valid-size", "-1000"}),
                             "--valid-size");
  require_command_line_error(run_attnlab(dir, {"clean-corpus", "corpus", "en", "de", "out", "1.5", "80"}), "min");
  require_command_line_error(
      run_attnlab(dir, {"clean-corpus", "corpus", "en", "de", "out", "1", "80", "--max-word-length", "1e30"}),
      "--max-word-length");
  // Signed flags saturated too; and a BPE merge count or frequency below its meaning.
  require_command_line_error(run_attnlab(dir, {"bpe", "learn", "-s", "99999999999999999999", "-i", text}),
                             "--symbols");
  require_command_line_error(run_attnlab(dir, {"bpe", "learn", "--min-frequency", "0", "-i", text}),
                             "--min-frequency");
  require_command_line_error(run_attnlab(dir, {"bpe", "apply", "-c", text, "-m", "-5"}), "--merges");
  require_command_line_error(
      run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--nwordssrc", "99999999999999999999"}), "--nwordssrc");
}

TEST_CASE("a non-integer for a text tool's integer flag is a command-line error saying the flag takes an integer") {
  TempDir dir;
  const std::string text = input_file(dir, "in.txt", "a b\n");
  // CLI11 said "Could not convert: --paired-bs-n = 1.5".
  require_command_line_error(run_attnlab(dir, {"score", "-r", text, "--paired-bs-n", "1.5"}, text),
                             "--paired-bs-n: must be an integer, got '1.5'");
  require_command_line_error(run_attnlab(dir, {"score", "-r", text, "--confidence-n", "1e3"}, text),
                             "--confidence-n: must be an integer, got '1e3'");
  // A bound that is the type's own limit goes unsaid; a number beyond the type says so.
  require_command_line_error(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--thresholdsrc", "1.5"}),
                             "--thresholdsrc: must be an integer, got '1.5'");
  require_command_line_error(run_attnlab(dir, {"bpe", "learn", "-s", "-5"}, text),
                             "--symbols: must be a non-negative integer, got '-5'");
  require_command_line_error(
      run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--thresholdsrc", "-99999999999999999999"}),
      "--thresholdsrc: must be an integer, got '-99999999999999999999', beyond the smallest it holds "
      "(-9223372036854775808)");
}

TEST_CASE("preprocess bounds --padding-factor and writes an empty --destdir into the current folder") {
  TempDir dir;
  input_file(dir, "train.en", "a b c\n");
  input_file(dir, "train.de", "x y\n");
  // 10^9 padded the dictionary with madeupwords until memory ran out.
  for (const char* factor : {"1000000000", "1048577", "0", "-8"}) {
    INFO(factor);
    require_command_line_error(
        run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", "train", "--padding-factor", factor}),
        "--padding-factor");
  }
  // DESTDIR/NAME with DESTDIR '' wrote /dict.en.txt and /train.en-de.en.bin, in the root folder.
  require_success(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", "train", "--destdir", ""}));
  for (const char* name : {"dict.en.txt", "dict.de.txt", "train.en-de.en.bin", "train.en-de.de.bin"}) {
    INFO(name);
    CHECK(fs::exists(dir.dir / name));
  }
}

TEST_CASE("score refuses a smoothing value that makes BLEU infinite, naming --smooth-value") {
  TempDir dir;
  const std::string text = input_file(dir, "hyp.txt", "the cat sat on the mat\n");
  for (const char* smoothing : {"add-k", "floor"}) {
    INFO(smoothing);
    auto score = [&](const char* value) {
      return run_attnlab(dir, {"score", "-r", text, "-s", smoothing, "--smooth-value", value}, text);
    };
    for (const char* value : {"1e308", "-1"}) require_command_line_error(score(value), "--smooth-value");
    const CommandResult largest = score("100");
    require_success(largest);
    CHECK(contains(largest.out, std::string("smooth:") + smoothing + "[100.00]|"));
  }
}

TEST_CASE("bpe apply --glossaries: words of 100,000 characters, and runaway regexes as errors naming the glossary") {
  TempDir dir;
  const std::string codes = input_file(dir, "codes", "#version: 0.2\na a\naa a\n");
  // std::regex recursed once per character: both crashed with a stack overflow (signal 11).
  const std::string letters = input_file(dir, "letters.txt", std::string(30000, 'a') + "\n");
  const CommandResult whole = run_fast(dir, {"bpe", "apply", "-c", codes, "--glossaries", "a+", "-i", letters});
  require_success(whole);
  CHECK(whole.out == std::string(30000, 'a') + "\n");
  const std::string tag = "<" + std::string(100000, 'a') + ">";
  const std::string tagged = input_file(dir, "tagged.txt", "x" + tag + "\n");
  const CommandResult kept = run_fast(dir, {"bpe", "apply", "-c", codes, "--glossaries", "<[^>]*>", "-i", tagged});
  require_success(kept);
  CHECK(kept.out == "x@@ " + tag + "\n");
  // (a+)+c backtracks 2^25 times on 25 letters: seconds, and twice as long per letter more.
  const std::string short_word = input_file(dir, "short.txt", "b " + std::string(25, 'a') + "\n");
  require_runtime_error(run_fast(dir, {"bpe", "apply", "-c", codes, "--glossaries", "(a+)+c", "-i", short_word}),
                        {"--glossaries '(a+)+c'", "25 bytes", "backtracking"});
  // A capture group nested 50 deep and repeated needs ~1 KB of backtracking stack per repeat.
  const std::string nested = std::string(50, '(') + "ab" + std::string(50, ')') + "+";
  std::string pairs;
  for (int i = 0; i < 100000; ++i) pairs += "ab";
  const std::string long_word = input_file(dir, "pairs.txt", pairs + "\n");
  require_runtime_error(run_fast(dir, {"bpe", "apply", "-c", codes, "--glossaries", nested, "-i", long_word}),
                        {"--glossaries '" + nested + "'", "backtracking stack"});
  require_runtime_error(run_attnlab(dir, {"bpe", "apply", "-c", codes, "--glossaries", "(a", "-i", short_word}),
                        {"--glossaries '(a'", "invalid regex"});
}

TEST_CASE("tokenize and detokenize are linear on runs of 100,000 dots, dashes, quotes, commas or digits") {
  TempDir dir;
  // tokenizer.perl's multi-dot loops take one pass over the line per dot: 100,000 dots took
  // minutes. The other runs are the worst cases of the other substitution loops.
  std::string runs;
  for (const char c : {'-', '\'', ',', '1'}) runs += "x" + std::string(100000, c) + "y\n";
  const std::string text = input_file(dir, "runs.txt", "x" + std::string(100000, '.') + "y\n" + runs);
  const CommandResult tokenized = run_fast(dir, {"tokenize", "-a"}, text);
  require_success(tokenized);
  const std::vector<std::string> lines = lines_of(tokenized.out);
  REQUIRE(lines.size() == 5);
  CHECK(lines.front() == "x " + std::string(100000, '.') + " y");
  require_success(run_fast(dir, {"detokenize"}, text));
  require_success(run_fast(dir, {"detokenize"}, input_file(dir, "tokens.txt", tokenized.out)));
}

TEST_CASE("input-from-sgm is linear in a segment of 200,000 lines and refuses a <seg> inside another") {
  TempDir dir;
  // Re-searching the joined line for each line joined took 33 s.
  std::string sgm = "<seg id=\"1\">";
  for (int i = 0; i < 200000; ++i) sgm += "x\n";
  sgm += "</seg>\n";
  const CommandResult joined = run_fast(dir, {"input-from-sgm"}, input_file(dir, "long.sgm", sgm));
  require_success(joined);
  CHECK(joined.out == std::string(200000, 'x') + "\n");
  // input-from-sgm.perl prints one line for two segments in both cases, shifting every later
  // line against the other side of the test set.
  require_runtime_error(
      run_attnlab(dir, {"input-from-sgm"},
                  input_file(dir, "nested.sgm", "<doc>\n<seg id=\"1\">never closed\n<seg id=\"2\">x</seg>\n")),
      {"<stdin>:3", "inside the segment opened on line 2"});
  require_runtime_error(
      run_attnlab(dir, {"input-from-sgm"},
                  input_file(dir, "two.sgm", "<seg id=\"1\">a</seg>\n<seg id=\"2\">a</seg><seg id=\"3\">b</seg>\n")),
      {"<stdin>:2", "a second <seg> on the line"});
}

TEST_CASE("bpe learn --dict-input refuses a negative count naming the file and line") {
  TempDir dir;
  const std::string dictionary = input_file(dir, "dict.txt", "high 3\nlow -5\n");
  require_runtime_error(run_attnlab(dir, {"bpe", "learn", "--dict-input", "-i", dictionary}),
                        {"dict.txt:2", "negative count '-5'"});
}
