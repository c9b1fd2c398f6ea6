// End-to-end tests of the text tools (README.md "Commands", "Preparing data" and its limits on
// hostile input) on input and flags built to break them: numbers beyond every sensible bound
// (thread counts, seeds, sizes, the padding factor, BLEU's smoothing value), words and
// segments hundreds of thousands of characters long, regexes that backtrack without end,
// malformed SGML and dictionaries; and the streams of every command that reads standard input
// or writes standard output (a read error, a closed descriptor, a full disk), with the decoding
// commands' search flags whose extremes overflow. Each must end in a clear error naming the
// flag, file, line or stream — exit code 2 (a command-line error) or 1 ("attnlab: error: ...")
// — or in the right output within seconds: never a signal, a hang, or output that silently
// means something else (a truncated input taken for the whole, exit code 0).
#include <catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "apps/training/trainer.hpp"
#include "cli_runner.hpp"
#include "synthetic_corpus.hpp"

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

// `line` repeated to `size` bytes (the last copy cut short).
std::string repeated(const std::string& line, size_t size) {
  std::string text;
  while (text.size() < size) text += line;
  return text.substr(0, size);
}

// Standard input that fails mid-stream, as a failing disk or network file system does: two
// pages of `line` repeated, then EIO. They are the memory of a child process read through
// /proc/PID/mem, up to a page left unmapped; the child only waits, so nothing maps that page
// again. The descriptor is inherited by the shell that runs attnlab (redirection()).
class InputFailingAfterTwoPages {
 public:
  explicit InputFailingAfterTwoPages(const std::string& line) : text_(repeated(line, 2 * page_size())) {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    holder_ = ::fork();
    REQUIRE(holder_ >= 0);
    if (holder_ == 0) hold_pages(ready[1]);
    ::close(ready[1]);
    uintptr_t address = 0;
    REQUIRE(::read(ready[0], &address, sizeof address) == sizeof address);
    ::close(ready[0]);
    fd_ = ::open(fmt::format("/proc/{}/mem", holder_).c_str(), O_RDONLY);
    REQUIRE(fd_ >= 0);
    REQUIRE(::lseek(fd_, off_t(address), SEEK_SET) == off_t(address));
  }
  ~InputFailingAfterTwoPages() {
    ::close(fd_);
    ::kill(holder_, SIGKILL);
    ::waitpid(holder_, nullptr, 0);
  }
  InputFailingAfterTwoPages(const InputFailingAfterTwoPages&) = delete;
  InputFailingAfterTwoPages& operator=(const InputFailingAfterTwoPages&) = delete;

  std::string redirection() const { return fmt::format("<&{}", fd_); }
  const std::string& text() const { return text_; }  // what can be read before the error

 private:
  static size_t page_size() { return size_t(::sysconf(_SC_PAGESIZE)); }

  // In the child: the pages, their address written to `ready`, then waiting to be killed.
  [[noreturn]] void hold_pages(int ready) const {
    const size_t page = page_size();
    void* mapped = ::mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) ::_exit(1);
    char* pages = static_cast<char*>(mapped);
    ::munmap(pages + 2 * page, page);
    text_.copy(pages, text_.size());
    const auto address = reinterpret_cast<uintptr_t>(pages);
    if (::write(ready, &address, sizeof address) != sizeof address) ::_exit(1);
    for (;;) ::pause();
  }

  std::string text_;
  pid_t holder_ = -1;
  int fd_ = -1;
};

// A model for the decoding commands: the tiny Transformer of synthetic_corpus.hpp after two
// updates on the reversal corpus (data-bin/, languages src and tgt, sentences of words w0..w15)
// as checkpoints/checkpoint_last, and BPE codes without merges (codes) for translate.
struct DecodingWorkspace {
  TempDir dir;

  static const DecodingWorkspace& get() {
    static const DecodingWorkspace workspace;
    return workspace;
  }

  // `translate` with the model, greedy, one thread, the search cut at 4 tokens.
  std::vector<std::string> translate() const {
    return {"translate", "--path", dir.file("checkpoints/checkpoint_last"), "--bpe-codes", dir.file("codes"),
            "--beam", "1", "--max-len-b", "4", "--threads", "1"};
  }

  // `generate` of the data's `split` with the model, greedy, one thread, the search cut at 4 tokens.
  std::vector<std::string> generate(const std::string& split) const {
    return {"generate", dir.file("data-bin"), "--path", dir.file("checkpoints/checkpoint_last"), "--gen-subset",
            split, "--beam", "1", "--max-len-b", "4", "--threads", "1"};
  }

 private:
  DecodingWorkspace() {
    fs::create_directories(dir.dir / "data-bin");
    attn::app::testing::write_reversal_corpus(dir.file("data-bin"));
    attn::app::TrainerOptions options =
        attn::app::testing::tiny_trainer_options(dir.file("data-bin"), dir.file("checkpoints"));
    options.max_update = 2;
    attn::app::Trainer(options).train();
    write_file(dir.dir / "codes", "#version: 0.2\n");
  }
};

// A runtime error whose one line is exactly "attnlab: error: MESSAGE".
void require_error_line(const CommandResult& result, const std::string& message) {
  require_runtime_error(result, {});
  CHECK(result.err == "attnlab: error: " + message + "\n");
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

TEST_CASE("bpe takes a value in [...] as typed, not as a list of values") {
  TempDir dir;
  const std::string codes = input_file(dir, "codes", "#version: 0.2\na a\naa a\n");
  const std::string text = input_file(dir, "text.txt", "a]a b,a\n");
  // Regexes that open with a bracket but end past it: a character class, then '+'.
  for (const std::string glossary : {"[]a]+", "[b,a]+"}) {
    const CommandResult result = run_attnlab(dir, {"bpe", "apply", "-c", codes, "--glossaries", glossary, "-i", text});
    require_success(result);
    CHECK(result.out == (glossary == "[]a]+" ? "a]a b@@ ,@@ a\n" : "a@@ ]@@ a b,a\n"));
  }
  // A glossary in brackets is a character class (subword-nmt: "a@@ a a@@ b"); CLI11 read '[ab]' as the word ab.
  const std::string merge = input_file(dir, "merge", "#version: 0.2\na a\n");
  const std::string words = input_file(dir, "words.txt", "aa ab\n");
  const CommandResult classed = run_attnlab(dir, {"bpe", "apply", "-c", merge, "--glossaries", "[ab]", "-i", words});
  require_success(classed);
  CHECK(classed.out == "a@@ a a@@ b\n");
  input_file(dir, "[x]", "ab ab\n");  // named as typed, not by its whole path, which does not start with '['
  const CommandResult learned = run_attnlab(dir, {"bpe", "learn", "-s", "1", "-i", "[x]"});
  require_success(learned);
  CHECK(learned.out == "#version: 0.2\na b</w>\n");
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

TEST_CASE("a read error on standard input is an error naming it, never the end of the input") {
  TempDir dir;
  const std::string codes = input_file(dir, "codes", "#version: 0.2\n");
  const std::vector<std::vector<std::string>> readers = {
      {"tokenize"}, {"tokenize", "-j", "2"}, {"detokenize"}, {"normalize-punctuation"}, {"remove-non-printing-char"},
      {"input-from-sgm"}, {"score", "-r", codes}, {"bpe", "learn", "-s", "5"}, {"bpe", "apply", "-c", codes}};
  for (const std::vector<std::string>& args : readers) {
    INFO(args.front() << " " << (args.size() > 1 ? args[1] : ""));
    // Each exited 0, its output cut where the read failed (score: "/dev/stdin: read failed").
    const InputFailingAfterTwoPages input("the cat sat on the mat .\n");
    const CommandResult failed = run_attnlab_redirected(dir, args, input.redirection());
    require_error_line(failed, "standard input: read failed: Input/output error");
    // What came before the error may be printed, line by line; the torn last line never is.
    CHECK(failed.out.size() < input.text().size());
    CHECK((failed.out.empty() || failed.out.ends_with("\n")));
    require_error_line(run_attnlab_redirected(dir, args, "<&-"), "standard input: read failed: Bad file descriptor");
  }
}

TEST_CASE("running out of memory is an error that says so, not a bare std::bad_alloc") {
  TempDir dir;
  const std::string reference = input_file(dir, "reference", "the cat sat on the mat .\n");
  // One line without end: score holds its input, so 1 GB of address space runs out within
  // seconds. (Far less stops OpenBLAS before main: its start-up allocation retries forever.)
  const CommandResult result =
      run_attnlab_redirected(dir, {"score", "-r", reference}, "< /dev/zero", "", "ulimit -v 1000000");
  require_runtime_error(result, {"out of memory"});
  CHECK(result.err.find("std::bad_alloc") == std::string::npos);
}

TEST_CASE("translate refuses standard input that fails, mid-stream or closed") {
  const DecodingWorkspace& workspace = DecodingWorkspace::get();
  const InputFailingAfterTwoPages input("w3 w4 w5\n");
  const CommandResult failed = run_attnlab_redirected(workspace.dir, workspace.translate(), input.redirection());
  require_error_line(failed, "standard input: read failed: Input/output error");
  CHECK(failed.out.empty());  // translated only once all is read
  require_error_line(run_attnlab_redirected(workspace.dir, workspace.translate(), "<&-"),
                     "standard input: read failed: Bad file descriptor");
}

TEST_CASE("standard output that cannot be written is named, with the reason, by every kind of writer") {
  const DecodingWorkspace& workspace = DecodingWorkspace::get();
  TempDir dir;
  // Each writes more than stdio's buffer, so a write fails before the end: fmt::print said
  // "cannot write to file: ..." (score, generate), std::cout lost the reason (translate).
  const std::string hypotheses = input_file(dir, "hyp.txt", repeated("the cat sat on the mat\n", 23 * 200));
  const std::string sources = input_file(dir, "src.txt", repeated("w3 w4 w5\n", 9 * 3000));
  for (const auto& [args, input] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"score", "-r", hypotheses, "--sentence"}, hypotheses},
           {workspace.generate("train"), "/dev/null"},
           {workspace.translate(), sources}}) {
    INFO(args.front());
    require_error_line(run_attnlab(dir, args, input, "/dev/full"),
                       "writing standard output failed: No space left on device");
  }
  // Closed, it stays closed: `train` wrote its progress lines into the first file it opened,
  // its log, and exited 0.
  std::vector<std::string> train = attn::app::testing::tiny_training_command(
      ATTNLAB_BINARY, workspace.dir.file("data-bin"), dir.file("checkpoints"));
  train.erase(train.begin());  // the binary
  train.insert(train.end(), {"--max-update", "1"});
  require_error_line(run_attnlab_redirected(dir, train, "< /dev/null", ">&-"),
                     "writing standard output failed: Bad file descriptor");
  for (const std::string& line : lines_of(read_file(dir.file("checkpoints/train_log.jsonl"))))
    CHECK(line.starts_with("{"));
}

TEST_CASE("search flags whose extremes overflow the search are command-line errors naming the flag and its range") {
  TempDir dir;
  // --lenpen -1e308 passed, then the length penalty overflowed: "the model produced NaN scores".
  for (const std::vector<std::string>& command : {std::vector<std::string>{"generate", "data", "--path", "ckpt"},
                                                  std::vector<std::string>{"translate", "--path", "ckpt"}})
    for (const auto& [flag, value, range] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"--lenpen", "-1e308", "[-20, 20]"}, {"--lenpen", "21", "[-20, 20]"},
             {"--unkpen", "-1e39", "[-1000, 1000]"}, {"--temperature", "1e-40", "[1e-06, 1000000]"},
             {"--temperature", "1e30", "[1e-06, 1000000]"}, {"--max-len-a", "1e308", "[0, 16777216]"}}) {
      std::vector<std::string> args = command;
      args.insert(args.end(), {flag, value});
      INFO(args.front() << " " << flag << " " << value);
      require_command_line_error(run_attnlab(dir, args), flag + ": must be a finite number in " + range);
    }
}

TEST_CASE("generate refuses a --min-len longer than any output may be, as fairseq does, naming both flags") {
  TempDir dir;
  // Ignored: exit 0, every hypothesis cut at --max-len-b. Refused before the model loads.
  require_error_line(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--min-len", "5", "--max-len-b", "3"}),
                     "generate: --min-len (5) is larger than --max-len-b (3), the longest output any sentence may "
                     "have with --max-len-a 0; fairseq refuses this too");
  const DecodingWorkspace& workspace = DecodingWorkspace::get();
  std::vector<std::string> args = workspace.generate("test");
  args.insert(args.end(), {"--min-len", "9", "--max-len-a", "0.5"});  // sources of at most 8 tokens
  require_runtime_error(run_attnlab(dir, args), {"--min-len 9 is larger than the longest output sentence",
                                                 "--max-len-a 0.5", "--max-len-b 4"});
}

TEST_CASE("an empty data dir is a command-line error naming the argument") {
  TempDir dir;
  // "data dir  does not exist": the empty name between two spaces.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"generate", "", "--path", "ckpt"},
                                               std::vector<std::string>{"validate", "", "--path", "ckpt"},
                                               std::vector<std::string>{"train", ""}}) {
    INFO(args.front());
    require_command_line_error(run_attnlab(dir, args), "data: is empty");
  }
}
