// `attnlab translate --path CKPT`: raw sentences on stdin -> translations on stdout, through
// the whole text pipeline: Moses tokenizer (docs/mt-tools.md §2) -> BPE (§1; the codes the
// checkpoint recorded, or --bpe-codes, or `codes` beside the checkpoint; none with --no-bpe)
// -> dictionary ids -> beam search (docs/models.md §1.10) -> BPE removed -> Moses detokenizer.
// Output order = input order; empty input lines give empty output lines. With --nbest N each
// line gives N lines, its hypotheses best first (an empty line gives N empty ones).
// fairseq-interactive's ways: --constraints [ordered|unordered] reads tab-separated target
// phrases after each source that every translation must contain (lexically constrained
// decoding, docs/models.md §1.10.6); --fairseq-lines prints its S-, W-, C-, H-, D- and P- lines
// (scores in base 2) in place of the translations alone, every line translated, empty or not.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/cli/compute_options.hpp"
#include "apps/cli/search_options.hpp"
#include "apps/generation/fairseq_lines.hpp"
#include "apps/generation/translator.hpp"
#include "apps/task/raw_text.hpp"
#include "apps/task/translation_task.hpp"
#include "apps/training/checkpoint.hpp"
#include "data/moses_detokenizer.hpp"
#include "data/standard_streams.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

struct TranslateArgs {
  std::string path, bpe_codes;
  DecodingOptions decoding;
  SamplingFlags sampling;
  bool no_tokenize = false, no_bpe = false;
  std::string constraints;  // "ordered" or "unordered" when asked for (fairseq's --constraints)
  bool fairseq_lines = false;
  ComputeOptions compute;
};

// One line of the input: the source's ids (</s> last) and, with --constraints, the ids of the
// target phrases that follow it, tab-separated.
struct InputLine {
  std::vector<int64_t> source;
  nn::Constraints constraints;
};

// fairseq-interactive's reading of a line with --constraints: whitespace stripped from both
// ends, then the fields between tabs.
std::vector<std::string> tab_separated_fields(const std::string& line) {
  const char* whitespace = " \t\r\n\f\v";
  const size_t first = line.find_first_not_of(whitespace);
  const std::string stripped =
      first == std::string::npos ? "" : line.substr(first, line.find_last_not_of(whitespace) - first + 1);
  std::vector<std::string> fields;
  for (size_t start = 0;;) {
    const size_t tab = stripped.find('\t', start);
    fields.push_back(stripped.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

// Constraint k of line `number`: its text tokenized and segmented as target text, without </s>.
std::vector<int64_t> encode_constraint(const std::string& text, size_t k, size_t number,
                                       const RawTextEncoder& target_encoder) {
  std::vector<int32_t> ids = target_encoder.encode(text, "<stdin>", number);
  ids.pop_back();  // </s>
  if (ids.empty()) throw Error(fmt::format("<stdin>:{}: constraint {} is empty", number, k));
  if (std::find(ids.begin(), ids.end(), data::Dictionary::kUnk) != ids.end())
    std::cerr << fmt::format("<stdin>:{}: constraint {} ('{}') holds symbols the target dictionary lacks: the "
                             "translation must then contain <unk>\n",
                             number, k, text);
  return {ids.begin(), ids.end()};
}

// Line `number` of the input; with a target encoder (--constraints), its first field is the
// source and the others are constraints.
InputLine read_line(const std::string& line, size_t number, const RawTextEncoder& source_encoder,
                    const RawTextEncoder* target_encoder) {
  const std::vector<std::string> fields =
      target_encoder ? tab_separated_fields(line) : std::vector<std::string>{line};
  const std::vector<int32_t> source = source_encoder.encode(fields.front(), "<stdin>", number);
  InputLine input{{source.begin(), source.end()}, {}};
  for (size_t k = 1; k < fields.size(); ++k)
    input.constraints.push_back(encode_constraint(fields[k], k, number, *target_encoder));
  return input;
}

// A translation that reached the maximum length before meeting all its constraints (the
// search lets it end there, constraints unmet) is named on standard error.
void warn_unmet_constraints(const nn::Hypothesis& h, const nn::Constraints& constraints, nn::ConstraintOrder order,
                            size_t number) {
  nn::ConstraintState state(std::make_shared<const nn::ConstraintSet>(constraints, order));
  for (size_t t = 0; t + 1 < h.tokens.size(); ++t) state = state.advance(h.tokens[t]);
  if (!state.finished())
    std::cerr << fmt::format(
        "<stdin>:{}: the translation reached the maximum length (--max-len-a, --max-len-b) "
        "without every constraint\n",
        number);
}

int run_translate(const TranslateArgs& args) {
  const Device device = apply_compute_options(args.compute);
  const std::vector<TrainedModel> trained = load_trained_models(args.path, device);
  const nn::ModelEnsemble models = ensemble_of(trained);
  const TranslationTask& task = trained.front().task;
  const std::string bpe_codes =
      args.no_bpe ? "" : find_bpe_codes(task, first_checkpoint(args.path), args.bpe_codes, "translate");
  const RawTextEncoder encoder(task.source_lang, bpe_codes, task.source_dict, !args.no_tokenize);
  const RawTextEncoder target_encoder(task.target_lang, bpe_codes, task.target_dict, !args.no_tokenize);
  const data::MosesDetokenizer detokenizer(data::parse_moses_language(task.target_lang));
  DecodingOptions decoding = args.decoding;
  if (!args.constraints.empty())
    decoding.search.constraint_order =
        args.constraints == "unordered" ? nn::ConstraintOrder::unordered : nn::ConstraintOrder::ordered;

  // The lines to translate; one without any tokens or constraints is answered with an empty
  // line (with --fairseq-lines it is translated, as fairseq-interactive does).
  std::vector<InputLine> inputs;
  std::vector<size_t> translated_line;  // each input's line number
  size_t lines = 0;
  for (std::string line; std::getline(data::standard_input(), line);) {
    InputLine input = read_line(line, ++lines, encoder, decoding.search.constraint_order ? &target_encoder : nullptr);
    check_source_length(models, input.source.size(), fmt::format("<stdin>:{}", lines));
    if (input.source.size() == 1 && input.constraints.empty() && !args.fairseq_lines) continue;  // only </s>
    inputs.push_back(std::move(input));
    translated_line.push_back(lines);
  }
  std::vector<std::vector<int64_t>> sources;
  std::vector<nn::Constraints> constraints;
  for (const InputLine& input : inputs) {
    sources.push_back(input.source);
    if (decoding.search.constraint_order) constraints.push_back(input.constraints);
  }
  const auto start = std::chrono::steady_clock::now();
  const auto hypotheses = translate_sentences(models, sources, decoding, {}, {}, constraints);
  const double seconds_each = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                              double(std::max<size_t>(1, sources.size()));

  auto text_of = [&](const nn::Hypothesis& h) {
    const std::string text = task.target_dict.decode(h.tokens, "@@ ");
    return args.no_tokenize ? text : detokenizer.detokenize(text);
  };
  size_t next = 0;  // the next translated input
  for (size_t number = 1; number <= lines; ++number) {
    if (next == inputs.size() || translated_line[next] != number) {
      std::cout << std::string(size_t(decoding.search.nbest), '\n');
      continue;
    }
    const size_t id = number - 1;  // fairseq-interactive counts lines from 0
    if (args.fairseq_lines) {
      std::cout << fmt::format("S-{}\t{}\nW-{}\t{:.3f}\tseconds\n", id, task.source_dict.decode(inputs[next].source),
                               id, seconds_each);
      for (const std::vector<int64_t>& constraint : inputs[next].constraints)
        std::cout << fmt::format("C-{}\t{}\n", id, task.target_dict.decode(constraint));
    }
    for (const nn::Hypothesis& h : hypotheses[next]) {
      if (decoding.search.constraint_order)
        warn_unmet_constraints(h, inputs[next].constraints, *decoding.search.constraint_order, number);
      std::cout << (args.fairseq_lines ? hypothesis_lines(id, h, task.target_dict.decode(h.tokens), text_of(h))
                                       : text_of(h) + "\n");
    }
    ++next;
  }
  return 0;
}

CommandAction setup_translate(CLI::App& cmd) {
  auto args = std::make_shared<TranslateArgs>();
  nn::SearchOptions& search = args->decoding.search;
  cmd.add_option("--path", args->path,
                 "Checkpoint (NAME, NAME.safetensors or NAME.json); A:B:C translates with an ensemble of them")
      ->required();
  cmd.add_option("--bpe-codes", args->bpe_codes, "BPE codes (default: the ones the checkpoint recorded)");
  cmd.add_flag("--no-bpe", args->no_bpe,
               "Apply no BPE: the input is segmented already, or the model was trained without BPE");
  cmd.add_flag("--no-tokenize", args->no_tokenize, "Input is tokenized already; print tokenized output");
  add_search_options(cmd, search, args->sampling);
  cmd.add_option("--nbest", search.nbest, "Translations printed per input line, best first (at most --beam)")
      ->check(positive_number())
      ->capture_default_str();
  add_optional_choice(cmd, "--constraints", args->constraints,
                      "Lexically constrained decoding: each input line is SOURCE<tab>PHRASE<tab>PHRASE..., and every "
                      "translation contains each target PHRASE; ordered (given alone): in the order given; "
                      "unordered: in any order",
                      {"ordered", "unordered"});
  cmd.add_flag("--fairseq-lines", args->fairseq_lines,
               "Print fairseq-interactive's S-, W-, C-, H-, D- and P- lines (scores in base 2) instead of the "
               "translations alone");
  cmd.add_option("--batch-size,--max-sentences", args->decoding.max_sentences, "Sentences per batch")
      ->check(positive_number());
  cmd.add_option("--max-tokens", args->decoding.max_tokens, "Source tokens per batch, padding included")
      ->check(positive_number());
  add_compute_options(cmd, args->compute);
  return [args] {
    apply_sampling_flags(args->sampling, args->decoding.search);
    ATTN_CHECK(args->decoding.search.nbest <= args->decoding.search.beam, "translate: --nbest ({}) > --beam ({})",
               args->decoding.search.nbest, args->decoding.search.beam);
    ATTN_CHECK(!args->no_bpe || args->bpe_codes.empty(), "translate: --no-bpe and --bpe-codes exclude one another");
    return run_translate(*args);
  };
}

const CommandRegistration translate_command("translate", "Translate raw sentences from stdin (tokenize, BPE, decode)",
                                            setup_translate);

}  // namespace
}  // namespace attn::app
