// `attnlab translate --path CKPT`: raw sentences on stdin -> translations on stdout, through
// the whole text pipeline: Moses tokenizer (docs/mt-tools.md §2) -> BPE (§1; the codes the
// checkpoint recorded, or --bpe-codes, or `codes` beside the checkpoint) -> dictionary ids ->
// beam search (docs/models.md §1.10) -> BPE removed -> Moses detokenizer. Output order =
// input order; empty input lines give empty output lines. With --nbest N each line gives N
// lines, its hypotheses best first (an empty line gives N empty ones).
#include <iostream>
#include <memory>

#include <fmt/core.h>

#include "apps/training/checkpoint.hpp"
#include "apps/cli/command.hpp"
#include "apps/cli/compute_options.hpp"
#include "apps/cli/search_options.hpp"
#include "apps/task/raw_text.hpp"
#include "apps/task/translation_task.hpp"
#include "apps/generation/translator.hpp"
#include "data/moses_detokenizer.hpp"
#include "data/standard_streams.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

struct TranslateArgs {
  std::string path, bpe_codes;
  DecodingOptions decoding;
  SamplingFlags sampling;
  bool no_tokenize = false;
  ComputeOptions compute;
};

int run_translate(const TranslateArgs& args) {
  const Device device = apply_compute_options(args.compute);
  const std::vector<TrainedModel> trained = load_trained_models(args.path, device);
  const nn::ModelEnsemble models = ensemble_of(trained);
  const TranslationTask& task = trained.front().task;
  const std::string bpe_codes = find_bpe_codes(task, first_checkpoint(args.path), args.bpe_codes, "translate");
  const RawTextEncoder encoder(task.source_lang, bpe_codes, task.source_dict, !args.no_tokenize);
  const data::MosesDetokenizer detokenizer(data::parse_moses_language(task.target_lang));

  // The sources of the lines with tokens; a line without any is answered with an empty line.
  std::vector<std::vector<int64_t>> sources;
  std::vector<bool> line_is_empty;
  for (std::string line; std::getline(data::standard_input(), line);) {
    const size_t line_number = line_is_empty.size() + 1;
    const std::vector<int32_t> ids = encoder.encode(line, "<stdin>", line_number);
    check_source_length(models, ids.size(), fmt::format("<stdin>:{}", line_number));
    line_is_empty.push_back(ids.size() == 1);  // only </s>
    if (!line_is_empty.back()) sources.emplace_back(ids.begin(), ids.end());
  }
  const auto hypotheses = translate_sentences(models, sources, args.decoding);
  auto nbest = hypotheses.begin();
  const size_t per_line = size_t(args.decoding.search.nbest);
  for (const bool empty : line_is_empty) {
    if (empty) {
      std::cout << std::string(per_line, '\n');
      continue;
    }
    for (const nn::Hypothesis& hypothesis : *nbest++) {
      const std::string text = task.target_dict.decode(hypothesis.tokens, "@@ ");
      std::cout << (args.no_tokenize ? text : detokenizer.detokenize(text)) << "\n";
    }
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
  cmd.add_flag("--no-tokenize", args->no_tokenize, "Input is tokenized already; print tokenized output");
  add_search_options(cmd, search, args->sampling);
  cmd.add_option("--nbest", search.nbest, "Translations printed per input line, best first (at most --beam)")
      ->check(positive_number())
      ->capture_default_str();
  cmd.add_option("--batch-size,--max-sentences", args->decoding.max_sentences, "Sentences per batch")
      ->check(positive_number());
  cmd.add_option("--max-tokens", args->decoding.max_tokens, "Source tokens per batch, padding included")
      ->check(positive_number());
  add_compute_options(cmd, args->compute);
  return [args] {
    apply_sampling_flags(args->sampling, args->decoding.search);
    ATTN_CHECK(args->decoding.search.nbest <= args->decoding.search.beam, "translate: --nbest ({}) > --beam ({})",
               args->decoding.search.nbest, args->decoding.search.beam);
    return run_translate(*args);
  };
}

const CommandRegistration translate_command("translate", "Translate raw sentences from stdin (tokenize, BPE, decode)",
                                            setup_translate);

}  // namespace
}  // namespace attn::app
