// Where the commands' output goes when it is not a plain new file (README.md "Commands"): a
// full disk on standard output is an error, not exit code 0; a folder as standard input or as
// an input file is refused instead of read as empty; /dev/null and links stay what they are;
// the files of one command (clean-corpus, bpe learn-joint, preprocess) are written all or none;
// an output over a file the command reads is refused (bpe's model files and text, plot's
// training logs).
#include <catch.hpp>

#include <filesystem>

#include "cli_runner.hpp"

using namespace attn::test;
namespace fs = std::filesystem;

TEST_CASE("output that cannot be written to standard output is an error, not a success") {
  TempDir dir;
  const std::string input = write_file(dir.dir / "in.txt", "Hello, world.\n");
  const CommandResult result = run_attnlab(dir, {"tokenize"}, input, "/dev/full");
  CHECK(result.exit_code == kRuntimeError);
  CHECK(result.err.starts_with("attnlab: error: writing standard output failed"));
}

TEST_CASE("a failed write to standard output is reported with its reason") {
  TempDir dir;
  const std::string line = write_file(dir.dir / "line.txt", "Hello, world.\n");
  std::string lines;
  for (int i = 0; i < 100000; ++i) lines += "Hello, world.\n";
  const std::string many = write_file(dir.dir / "many.txt", lines);  // fails mid-run, at a full buffer
  write_file(dir.dir / "codes", "#version: 0.2\nH e\n");
  // These flush their output themselves, or fill their buffer, so the write fails before the
  // final check: std::cout keeps the reason of its first failed write (data/text_io.hpp).
  for (const auto& [args, input] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"tokenize"}, line}, {{"detokenize"}, line}, {{"tokenize"}, many}, {{"tokenize", "-j", "2"}, many},
           {{"bpe", "learn", "-s", "5"}, many}, {{"bpe", "apply", "-c", "codes"}, many}}) {
    INFO(args.front() << " < " << input);
    require_runtime_error(run_attnlab(dir, args, input, "/dev/full"),
                          {"writing standard output failed: No space left on device"});
  }
}

TEST_CASE("a folder as standard input or as an input file is refused, naming it") {
  TempDir dir;
  fs::create_directory(dir.dir / "folder");
  require_runtime_error(run_attnlab(dir, {"tokenize"}, dir.file("folder")), {"standard input is a folder"});
  require_runtime_error(run_attnlab(dir, {"bpe", "learn", "-s", "5", "-i", "folder", "-o", "codes"}),
                        {"folder: is a folder, not a file"});
  CHECK_FALSE(fs::exists(dir.dir / "codes"));
}

TEST_CASE("an output through a link replaces the link's file; /dev/null stays a device") {
  TempDir dir;
  write_file(dir.dir / "words.txt", "low lower lowest\n");
  write_file(dir.dir / "codes.real", "old\n");
  fs::create_symlink("codes.real", dir.dir / "codes");
  require_success(run_attnlab(dir, {"bpe", "learn", "-s", "5", "-i", "words.txt", "-o", "codes"}));
  CHECK(fs::is_symlink(dir.dir / "codes"));
  CHECK(read_file(dir.file("codes.real")).starts_with("#version: 0.2\n"));
  require_success(run_attnlab(dir, {"bpe", "learn", "-s", "5", "-i", "words.txt", "-o", "/dev/null"}));
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("clean-corpus writes both sides or neither") {
  TempDir dir;
  write_file(dir.dir / "corpus.en", "a b\nc d\n");
  write_file(dir.dir / "corpus.de", "x y\nz w\n");
  write_file(dir.dir / "clean.en", "kept\n");
  fs::create_directory(dir.dir / "clean.de");
  require_runtime_error(run_attnlab(dir, {"clean-corpus", "corpus", "en", "de", "clean", "1", "80"}),
                        {"clean.de: is a folder, not a file"});
  CHECK(read_file(dir.file("clean.en")) == "kept\n");
  require_runtime_error(run_attnlab(dir, {"clean-corpus", "corpus", "en", "en", "same", "1", "80"}),
                        {"same.en: named twice as an output"});
}

TEST_CASE("bpe learn-joint and preprocess replace all their files together, or none") {
  TempDir dir;
  write_file(dir.dir / "train.en", "low lower lowest\n");
  write_file(dir.dir / "train.de", "neu neuer neuste\n");
  write_file(dir.dir / "codes", "old codes\n");
  write_file(dir.dir / "vocab.en", "old vocabulary\n");
  fs::create_directory(dir.dir / "vocab.de");
  require_runtime_error(run_attnlab(dir, {"bpe", "learn-joint", "-s", "5", "--input", "train.en", "train.de", "-o",
                                          "codes", "--write-vocabulary", "vocab.en", "vocab.de"}),
                        {"vocab.de: is a folder, not a file"});
  CHECK(read_file(dir.file("codes")) == "old codes\n");
  CHECK(read_file(dir.file("vocab.en")) == "old vocabulary\n");

  require_success(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", "train", "--destdir", "bin"}));
  const std::string dictionary = read_file(dir.file("bin/dict.en.txt"));
  fs::remove(dir.dir / "bin/train.en-de.de.bin");
  fs::create_directory(dir.dir / "bin/train.en-de.de.bin");
  write_file(dir.dir / "train.en", "other words entirely\n");
  require_runtime_error(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", "train", "--destdir", "bin"}),
                        {"train.en-de.de.bin: is a folder, not a file"});
  CHECK(read_file(dir.file("bin/dict.en.txt")) == dictionary);
}

TEST_CASE("bpe refuses an output that is one of the files it reads, except apply's -i in place") {
  TempDir dir;
  write_file(dir.dir / "words.txt", "low lower lowest\n");
  require_success(run_attnlab(dir, {"bpe", "learn", "-s", "5", "-i", "words.txt", "-o", "codes"}));
  const std::string codes = read_file(dir.file("codes"));
  fs::create_symlink("codes", dir.dir / "codes.link");
  require_runtime_error(run_attnlab(dir, {"bpe", "apply", "-c", "codes", "-i", "words.txt", "-o", "codes.link"}),
                        {"codes.link: is also the BPE codes (-c) (codes)"});
  CHECK(read_file(dir.file("codes")) == codes);
  require_runtime_error(run_attnlab(dir, {"bpe", "learn", "-s", "5", "-i", "words.txt", "-o", "words.txt"}),
                        {"words.txt: is also an input"});
  require_runtime_error(run_attnlab(dir, {"bpe", "learn-joint", "-s", "5", "--input", "words.txt", "-o", "joint",
                                          "--write-vocabulary", "words.txt"}),
                        {"words.txt: is also an input"});
  CHECK(read_file(dir.file("words.txt")) == "low lower lowest\n");
  require_success(run_attnlab(dir, {"bpe", "apply", "-c", "codes", "-i", "words.txt", "-o", "words.txt"}));
  CHECK(read_file(dir.file("words.txt")) != "low lower lowest\n");  // segmented in place
}

TEST_CASE("plot refuses an output that is a training log it reads, under any name") {
  TempDir dir;
  const std::string log =
      "{\"type\": \"train\", \"update\": 1, \"loss\": 4}\n{\"type\": \"train\", \"update\": 2, \"loss\": 3}\n";
  write_file(dir.dir / "v.jsonl", log);
  fs::create_directory(dir.dir / "run");
  write_file(dir.dir / "run" / "train_log.jsonl", log);
  fs::create_symlink("run/train_log.jsonl", dir.dir / "curves.png");
  require_runtime_error(run_attnlab(dir, {"plot", "v.jsonl", "-o", "v.jsonl"}),
                        {"v.jsonl: is also a run's training log"});
  require_runtime_error(run_attnlab(dir, {"plot", "v.jsonl", "run", "-o", "run/train_log.jsonl"}),
                        {"run/train_log.jsonl: is also a run's training log"});
  require_runtime_error(run_attnlab(dir, {"plot", "run", "-o", "curves.png"}),
                        {"curves.png: is also a run's training log (run/train_log.jsonl)"});
  CHECK(read_file(dir.file("v.jsonl")) == log);
  CHECK(read_file(dir.file("run/train_log.jsonl")) == log);
}
