// `attnlab score --ref REF [--ref REF2 …] < HYP`: BLEU of the hypotheses on stdin, printed
// the way one of three reference tools prints it (docs/mt-tools.md §3, docs/models.md §1.12):
//
//   --format sacrebleu   (default) sacreBLEU 2.x text line with its signature, corpus or
//                        --sentence level; --tokenize, --smooth, --smooth-value, --width;
//   --format multi-bleu  multi-bleu.perl's line, for tokenized text;
//   --format fairseq     fairseq-score's line (one reference).
//
// --lowercase means each tool's own case folding (sacreBLEU -lc and fairseq --ignore-case:
// full Unicode; multi-bleu -lc: ASCII only). --compound-split applies the WMT14 EN-DE
// `##AT##-##AT##` rewrite to hypotheses and references first. Lines end at '\n' only (a '\r'
// inside a line is whitespace; sacreBLEU's stdin would split there and treat tabs as
// separate systems).
#include <memory>

#include <fmt/format.h>

#include "apps/cli/command.hpp"
#include "data/bleu.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

struct ScoreOptions {
  std::vector<std::string> references;
  std::string format = "sacrebleu", tokenize = "13a", smooth = "exp";
  double smooth_value = 0;
  bool lowercase = false, sentence = false, compound_split = false;
  int width = 1;
  // Options that only sacreBLEU has (to reject them for the other formats).
  std::vector<CLI::Option*> sacrebleu_only;
  CLI::Option* smooth_value_option = nullptr;  // unset: the smoothing method's default
};

const std::string kStdin = "/dev/stdin";

// Every line of every reference file; an empty file or a line count different from the
// hypotheses' is an error naming the file and both counts.
std::vector<std::vector<std::string>> read_references(const std::vector<std::string>& paths, size_t num_hypotheses,
                                                      bool check_encoding) {
  std::vector<std::vector<std::string>> streams;
  for (const std::string& path : paths) {
    streams.push_back(data::read_lines(path, check_encoding));
    if (streams.back().empty()) throw data::DataError(fmt::format("{}: reference file is empty", path));
    if (streams.back().size() != num_hypotheses)
      throw data::DataError(fmt::format("{} has {} lines but stdin has {} hypotheses", path, streams.back().size(),
                                        num_hypotheses));
  }
  return streams;
}

void apply_compound_split(std::vector<std::string>& lines) {
  for (std::string& line : lines) line = data::compound_split(line);
}

void check_option_combination(const ScoreOptions& options) {
  if (options.format == "sacrebleu") return;
  for (const CLI::Option* option : options.sacrebleu_only)
    if (option->count() > 0)
      throw data::DataError(fmt::format("{} applies to --format sacrebleu only (not {})", option->get_name(),
                                        options.format));
  if (options.format == "fairseq" && options.references.size() != 1)
    throw data::DataError(fmt::format("--format fairseq scores against one reference, got {}", options.references.size()));
}

data::SacreBleuOptions sacrebleu_options(const ScoreOptions& options) {
  data::SacreBleuOptions sacrebleu;
  sacrebleu.tokenizer = data::parse_bleu_tokenizer(options.tokenize);
  sacrebleu.smoothing = data::parse_bleu_smoothing(options.smooth);
  if (options.smooth_value_option->count() > 0) sacrebleu.smooth_value = options.smooth_value;
  sacrebleu.lowercase = options.lowercase;
  sacrebleu.effective_order = options.sentence;  // as sacreBLEU's --sentence-level does
  return sacrebleu;
}

int run_score(const ScoreOptions& options) {
  check_option_combination(options);
  const bool bytes_only = options.format == "multi-bleu";  // multi-bleu.perl reads bytes
  std::vector<std::string> hypotheses = data::read_lines(kStdin, !bytes_only);
  if (hypotheses.empty()) throw data::DataError("no hypotheses on stdin");
  std::vector<std::vector<std::string>> references = read_references(options.references, hypotheses.size(), !bytes_only);
  if (options.compound_split) {
    apply_compound_split(hypotheses);
    for (auto& stream : references) apply_compound_split(stream);
  }

  if (options.format == "multi-bleu") {
    fmt::print("{}\n", data::format_multibleu_score(
                           data::multibleu_compute(data::multibleu_stats(hypotheses, references, options.lowercase))));
  } else if (options.format == "fairseq") {
    fmt::print("{}\n", data::format_fairseq_score(data::fairseq_compute(
                           data::fairseq_stats(hypotheses, references.front(), options.lowercase))));
  } else {
    data::SacreBleuOptions sacrebleu = sacrebleu_options(options);
    std::string signature = data::sacrebleu_signature(sacrebleu, int(references.size()));
    if (!options.sentence) {
      data::BleuScore score = data::sacrebleu_corpus_score(hypotheses, references, sacrebleu);
      fmt::print("{}\n", data::format_sacrebleu_score(score, signature, options.width));
      return 0;
    }
    std::vector<std::string> segment_references(references.size());
    for (size_t i = 0; i < hypotheses.size(); ++i) {
      for (size_t r = 0; r < references.size(); ++r) segment_references[r] = references[r][i];
      data::BleuScore score = data::sacrebleu_sentence_score(hypotheses[i], segment_references, sacrebleu);
      fmt::print("{}\n", data::format_sacrebleu_score(score, signature, options.width));
    }
  }
  return 0;
}

CommandRegistration score_command(
    "score", "BLEU of stdin against references (sacreBLEU, multi-bleu.perl or fairseq-score)",
    [](CLI::App& cmd) -> CommandAction {
      auto options = std::make_shared<ScoreOptions>();
      cmd.add_option("-r,--ref", options->references, "Reference file (repeat for several references)")
          ->required()
          ->check(CLI::ExistingFile);
      cmd.add_option("-f,--format", options->format, "Whose output line to print")
          ->check(CLI::IsMember({"sacrebleu", "multi-bleu", "fairseq"}))
          ->capture_default_str();
      cmd.add_flag("--lowercase", options->lowercase, "Case-insensitive (each tool's own lower-casing)");
      cmd.add_flag("--compound-split", options->compound_split,
                   "Rewrite X-Y as X ##AT##-##AT## Y in hypotheses and references first (WMT14 EN-DE)");
      options->smooth_value_option =
          cmd.add_option("--smooth-value", options->smooth_value, "Value for floor (default 0.1) or add-k (default 1)");
      options->sacrebleu_only = {
          cmd.add_option("-t,--tokenize", options->tokenize, "sacreBLEU tokenizer")
              ->check(CLI::IsMember({"13a", "intl", "char", "none"}))
              ->capture_default_str(),
          cmd.add_option("-s,--smooth", options->smooth, "Smoothing method")
              ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}))
              ->capture_default_str(),
          options->smooth_value_option,
          cmd.add_flag("--sentence", options->sentence, "One sentence-BLEU line per hypothesis (effective order)"),
          cmd.add_option("-w,--width", options->width, "Decimals of the score (sacreBLEU's command line prints 1)")
              ->check(CLI::Range(0, 16))
              ->capture_default_str(),
      };
      return [options] { return run_score(*options); };
    });

}  // namespace
}  // namespace attn::app
