// `attnlab bpe learn | apply | learn-joint`: subword-nmt's learn-bpe, apply-bpe and
// learn-joint-bpe-and-vocab (docs/mt-tools.md §1). Standard input is split into lines like the
// Python stream each of them reads (§1.4), `-i FILE` like subword-nmt's codecs reader.
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "data/bpe_apply.hpp"
#include "data/bpe_learn.hpp"
#include "data/standard_streams.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

using namespace attn::data;

std::string read_standard_input() {
  std::string text{std::istreambuf_iterator<char>(standard_input()), std::istreambuf_iterator<char>()};
  check_utf8_text(text, "<stdin>");
  return text;
}

// The text of `path` split as subword-nmt would, or of standard input when path is empty
// (learn-bpe and apply-bpe split standard input differently: `stdin_mode`).
TextLines read_input(const std::string& path, LineMode stdin_mode) {
  if (path.empty()) return split_lines(read_standard_input(), stdin_mode);
  return split_lines(read_utf8_file(path), LineMode::SplitLines);
}

void write_output(const std::string& path, const std::string& content) {
  if (path.empty())
    std::cout << content;
  else
    write_file_atomic(path, content);
}

void report(const BpeLearnResult& result, const BpeLearnOptions& options, bool verbose) {
  if (verbose)
    for (size_t i = 0; i < result.merges.size(); ++i) std::cerr << format_merge_trace(i, result.merges[i]);
  if (result.stopped_by_min_frequency)
    std::cerr << fmt::format("no pair has frequency >= {}. Stopping\n", options.min_frequency);
}

struct LearnArgs {
  BpeLearnOptions options;
  std::vector<std::string> inputs;
  std::string output;
  bool dict_input = false, verbose = false;
};

int learn(const LearnArgs& args) {
  for (const std::string& input : args.inputs) refuse_output_over_input(args.output, input, "an input");
  WordCounts words;
  std::vector<std::string> inputs = args.inputs.empty() ? std::vector<std::string>{""} : args.inputs;
  for (const auto& input : inputs) {
    TextLines text = read_input(input, LineMode::Newline);
    if (args.dict_input)
      read_dictionary(text, input.empty() ? "<stdin>" : input, words);
    else
      count_words(text, words);
  }
  BpeLearnResult result = learn_bpe(words, args.options);
  report(result, args.options, args.verbose);
  write_output(args.output, format_bpe_codes(result.merges));
  return 0;
}

struct ApplyArgs {
  std::string codes, input, output, vocabulary;
  int64_t merges = -1;
  std::optional<int64_t> vocabulary_threshold;
  BpeApplyOptions options;
};

int apply(ApplyArgs& args) {
  // -i and -o may name one file (an edit in place); the codes and the vocabulary may not be lost.
  refuse_output_over_input(args.output, args.codes, "the BPE codes (-c)");
  refuse_output_over_input(args.output, args.vocabulary, "the vocabulary (--vocabulary)");
  if (!args.vocabulary.empty()) args.options.vocabulary = read_bpe_vocabulary(args.vocabulary, args.vocabulary_threshold);
  BpeEncoder encoder(BpeCodes::read(args.codes, args.merges), args.options);
  write_output(args.output, encoder.apply(read_input(args.input, LineMode::Universal)));
  return 0;
}

struct JointArgs {
  BpeLearnOptions options;
  std::vector<std::string> inputs, vocabularies;
  std::string output;
  bool verbose = false;
};

int learn_joint(const JointArgs& args) {
  if (args.inputs.size() != args.vocabularies.size())
    throw DataError(fmt::format("bpe learn-joint: {} input files but {} --write-vocabulary files", args.inputs.size(),
                                args.vocabularies.size()));
  for (const std::string& input : args.inputs) {
    refuse_output_over_input(args.output, input, "an input");
    for (const std::string& vocabulary : args.vocabularies) refuse_output_over_input(vocabulary, input, "an input");
  }
  JointBpeResult result = learn_joint_bpe(args.inputs, args.options);
  report(result.codes, args.options, args.verbose);
  // The codes and the vocabularies are replaced together: a failure leaves all as they were.
  OutputFiles outputs;
  outputs.add(args.output, format_bpe_codes(result.codes.merges));  // -o is required here
  for (size_t i = 0; i < args.vocabularies.size(); ++i) outputs.add(args.vocabularies[i], result.vocabularies[i]);
  outputs.commit();
  return 0;
}

CommandAction setup_bpe(CLI::App& cmd) {
  cmd.require_subcommand(1);
  auto learn_args = std::make_shared<LearnArgs>();
  CLI::App* learn_cmd = cmd.add_subcommand("learn", "learn BPE merges (subword-nmt learn-bpe)");
  add_integer_option(*learn_cmd, "-s,--symbols", learn_args->options.num_symbols, "number of merges", 0)
      ->capture_default_str();
  add_integer_option(*learn_cmd, "--min-frequency", learn_args->options.min_frequency,
                     "stop below this pair frequency", 1)
      ->capture_default_str();
  learn_cmd->add_flag("--dict-input", learn_args->dict_input, "input lines are 'word count'");
  learn_cmd->add_option("-i,--input", learn_args->inputs, "input files (default: standard input)");
  learn_cmd->add_option("-o,--output", learn_args->output, "codes file (default: standard output)");
  learn_cmd->add_flag("-v,--verbose", learn_args->verbose, "print every merge and its frequency to stderr");

  auto apply_args = std::make_shared<ApplyArgs>();
  CLI::App* apply_cmd = cmd.add_subcommand("apply", "segment text with BPE codes (subword-nmt apply-bpe)");
  apply_cmd->add_option("-c,--codes", apply_args->codes, "codes file")->required();
  add_integer_option(*apply_cmd, "-m,--merges", apply_args->merges, "use only the first N merges (default -1: all)",
                     -1);
  apply_cmd->add_option("--glossaries", apply_args->options.glossaries, "regexes of words never split");
  apply_cmd->add_option("--vocabulary", apply_args->vocabulary, "vocabulary file ('word count' lines)");
  apply_cmd->add_option("--vocabulary-threshold", apply_args->vocabulary_threshold, "minimum count in the vocabulary")
      ->check(integer_in_range<int64_t>());
  apply_cmd->add_option("-s,--separator", apply_args->options.separator, "separator after non-final subwords")
      ->capture_default_str();
  apply_cmd->add_option("-i,--input", apply_args->input, "input file (default: standard input)");
  apply_cmd->add_option("-o,--output", apply_args->output, "output file (default: standard output)");

  auto joint_args = std::make_shared<JointArgs>();
  CLI::App* joint_cmd =
      cmd.add_subcommand("learn-joint", "learn BPE on several files and write their vocabularies "
                                        "(subword-nmt learn-joint-bpe-and-vocab)");
  joint_cmd->add_option("--input", joint_args->inputs, "training files")->required();
  add_integer_option(*joint_cmd, "-s,--symbols", joint_args->options.num_symbols, "number of merges", 0)
      ->capture_default_str();
  joint_cmd->add_option("-o,--output", joint_args->output, "codes file")->required();
  joint_cmd->add_option("--write-vocabulary", joint_args->vocabularies, "one vocabulary file per input")->required();
  add_integer_option(*joint_cmd, "--min-frequency", joint_args->options.min_frequency,
                     "stop below this pair frequency", 1)
      ->capture_default_str();
  joint_cmd->add_flag("-v,--verbose", joint_args->verbose, "print every merge and its frequency to stderr");

  return [=]() {
    if (learn_cmd->parsed()) return learn(*learn_args);
    if (apply_cmd->parsed()) return apply(*apply_args);
    return learn_joint(*joint_args);
  };
}

const CommandRegistration bpe_command("bpe", "byte-pair encoding: learn, apply, learn-joint (subword-nmt)", setup_bpe);

}  // namespace
}  // namespace attn::app
