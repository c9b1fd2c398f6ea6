// `attnlab preprocess` as a user runs it, on inputs where fairseq-preprocess writes files that
// attnlab refuses or reads differently, and writing fairseq's own file format (docs/mt-tools.md §4).
#include <catch.hpp>

#include <filesystem>
#include <iterator>

#include "cli_runner.hpp"

using namespace attn::test;

TEST_CASE("preprocess refuses one language on both sides, whose files would coincide") {
  TempDir dir;
  write_file(dir.dir / "train.en", "a b\n");
  const CommandResult result = run_attnlab(dir, {"preprocess", "-s", "en", "-t", "en", "--trainpref", "train"});
  require_runtime_error(result, {"--source-lang", "--target-lang", "'en'", "dict.en.txt"});
  CHECK(!std::filesystem::exists(dir.dir / "data-bin" / "dict.en.txt"));
}

TEST_CASE("preprocess --srcdict reads a dictionary with lone \\r line ends and Python-style counts as fairseq does") {
  TempDir dir;
  write_file(dir.dir / "train.en", "a b\n");
  write_file(dir.dir / "train.de", "x\n");
  write_file(dir.dir / "given.txt", "a 5\rb 1_0\r\nc \t3\n");
  require_success(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", "train", "--srcdict",
                                    "given.txt", "--destdir", "bin"}));
  // fairseq-preprocess (3d262bb) writes this dict.en.txt from the same given.txt.
  CHECK(read_file(dir.file("bin/dict.en.txt")) == "a 5\nb 10\nc 3\n");
}

// own/fairseq/data-bin and data-bin-lazy: fairseq-preprocess (3d262bb) of the same text with
// --dataset-impl mmap and lazy (cached writes lazy's bytes), without its preprocess.log.
TEST_CASE("preprocess --dataset-impl mmap, lazy and cached write fairseq-preprocess's files byte for byte") {
  TempDir dir;
  const std::string text = vector_path("own/fairseq/data-bin-text/");
  for (const auto& [impl, expected] :
       {std::pair{"mmap", "data-bin"}, {"lazy", "data-bin-lazy"}, {"cached", "data-bin-lazy"}}) {
    INFO(impl);
    const std::string out = std::string("bin-") + impl;
    require_success(
        run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", text + "train", "--validpref",
                          text + "valid", "--dataset-impl", impl, "--workers", "2", "--destdir", out}));
    size_t compared = 0;
    for (const auto& entry : std::filesystem::directory_iterator(vector_path(std::string("own/fairseq/") + expected))) {
      const std::string name = entry.path().filename().string();
      INFO(name);
      CHECK(read_file(dir.file(out + "/" + name)) == read_file(entry.path().string()));
      ++compared;
    }
    CHECK(compared == 10);  // two dictionaries, and a .bin and an .idx per split and language
    CHECK(std::distance(std::filesystem::directory_iterator(dir.dir / out), {}) == 10);
  }
  require_command_line_error(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", text + "train",
                                               "--dataset-impl", "huffman"}),
                             "--dataset-impl");
}

// fairseq-preprocess (3d262bb) --only-source writes data-bin's source files (dict.en.txt and the
// en splits: the dictionary is the source side's either way) and no target file; --dict-only
// its two dictionaries alone (both checked against fairseq's own runs of the same flags).
TEST_CASE("preprocess --only-source and --dict-only write what fairseq-preprocess writes") {
  TempDir dir;
  const std::string text = vector_path("own/fairseq/data-bin-text/");
  const std::string expected = vector_path("own/fairseq/data-bin/");
  for (const auto& [flag, files] :
       {std::pair<std::string, std::vector<std::string>>{
            "--only-source",
            {"dict.en.txt", "train.en-de.en.bin", "train.en-de.en.idx", "valid.en-de.en.bin", "valid.en-de.en.idx"}},
        {"--dict-only", {"dict.en.txt", "dict.de.txt"}}}) {
    INFO(flag);
    const std::string out = "bin" + flag;
    require_success(
        run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", text + "train", "--validpref",
                          text + "valid", flag, "--dataset-impl", "mmap", "--workers", "2", "--destdir", out}));
    for (const std::string& name : files) {
      INFO(name);
      CHECK(read_file(dir.file(out + "/" + name)) == read_file(expected + name));
    }
    CHECK(size_t(std::distance(std::filesystem::directory_iterator(dir.dir / out), {})) == files.size());
  }
  require_runtime_error(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", text + "train",
                                          "--joined-dictionary", "--target-first", "--only-source"}),
                        {"--target-first", "--only-source"});
}

// own/fairseq/alignment: made-up alignments of the training pairs, and the alignment dictionary
// fairseq's _align_files makes of them once its word ids are ints (make_alignment_files.py).
TEST_CASE("preprocess --alignfile writes the alignment dictionary; a bad alignment names file and line") {
  TempDir dir;
  const std::string text = vector_path("own/fairseq/data-bin-text/");
  const std::string alignments = vector_path("own/fairseq/alignment/train.align");
  auto preprocess = [&](const std::string& alignment_file, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"preprocess",   "-s",          "en",           "-t",        "de", "--trainpref",
                                     text + "train", "--alignfile", alignment_file, "--destdir", "bin"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_attnlab(dir, args);
  };
  require_success(preprocess(alignments));
  CHECK(read_file(dir.file("bin/alignment.en-de.txt")) ==
        read_file(vector_path("own/fairseq/alignment/alignment.en-de.txt")));

  const std::vector<std::string> lines = lines_of(read_file(alignments));
  auto with_line = [&](size_t index, const std::string& replacement) {
    std::string edited;
    for (size_t i = 0; i < lines.size(); ++i) edited += (i == index ? replacement : lines[i]) + "\n";
    write_file(dir.dir / "edited.align", edited);
    return dir.file("edited.align");
  };
  require_runtime_error(preprocess(with_line(4, lines[4] + " 3:4")), {"edited.align:5", "'3:4'", "'i-j'"});
  require_runtime_error(preprocess(with_line(0, "0-0 900-1")), {"edited.align:1", "source position 900", "train.en"});
  require_runtime_error(preprocess(with_line(0, "0-900")), {"edited.align:1", "target position 900", "train.de"});
  write_file(dir.dir / "short.align", lines[0] + "\n");
  require_runtime_error(preprocess(dir.file("short.align")), {"short.align has 1 lines", "one alignment line per"});
  require_runtime_error(preprocess(alignments, {"--dict-only"}), {"--alignfile", "--dict-only"});
}
