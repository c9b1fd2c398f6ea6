// `attnlab generate DATA_DIR --path CKPT --subset test --beam B --lenpen A ...`: batched beam
// search over a binarized split (docs/models.md §1.10), printing fairseq-generate's lines in
// the original sentence order so existing scripts keep working:
//   S-i  source (BPE removed with --remove-bpe)      T-i  reference
//   H-i  score  hypothesis tokens                    D-i  score  detokenized hypothesis
//   P-i  per-token log-probabilities                 A-i  source-target word alignment (--print-alignment)
// Scores are in base 2 as current fairseq prints them (score / ln 2); the closing line is
// fairseq's "Generate test with beam=B: BLEU4 = ..." (fairseq-score, docs/mt-tools.md §3.4), or
// with --scoring sacrebleu sacreBLEU's "BLEU = ..." (13a) as fairseq's sacrebleu scorer prints
// it. fairseq-generate's other flags: --tokenizer moses detokenizes the S-, T- and D- lines (the
// Moses detokenizer of the target language, as fairseq's decode_fn) and the text scored;
// --results-path DIR writes the lines to DIR/generate-SUBSET.txt instead of standard output;
// --skip-invalid-size-inputs-valid-test leaves out the sentences longer than the model's
// positions (said on standard error) instead of refusing the split; --cpu is --device cpu. A
// split with its source side alone (preprocess --only-source) gets no T- and no closing line.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/cli/compute_options.hpp"
#include "apps/cli/knn_options.hpp"
#include "apps/cli/search_options.hpp"
#include "apps/generation/fairseq_lines.hpp"
#include "apps/generation/knn_datastore_file.hpp"
#include "apps/generation/translator.hpp"
#include "apps/generation/unknown_word_replacement.hpp"
#include "apps/task/translation_task.hpp"
#include "data/bleu.hpp"
#include "data/post_process.hpp"
#include "data/moses_detokenizer.hpp"
#include "data/text_io.hpp"
#include "nn/search/knn_datastore.hpp"

namespace attn::app {
namespace {

struct GenerateArgs {
  std::string data_dir, path, subset = "test", remove_bpe;
  std::string print_alignment;  // "hard" or "soft" when asked for (fairseq's --print-alignment)
  bool replace_unk = false;          // fairseq's --replace-unk: each <unk> replaced from the source text
  std::string alignment_dictionary;  // ... by its source symbol's entry in this file (empty: the symbol)
  DecodingOptions decoding;
  SamplingFlags sampling;
  bool quiet = false;
  std::string results_path;       // fairseq's --results-path: DIR/generate-SUBSET.txt
  std::string scoring = "bleu";   // bleu (fairseq-score's BLEU4) or sacrebleu
  std::string tokenizer;          // "moses": detokenize what is printed and scored
  bool skip_invalid_size = false;  // leave out sources longer than the model's positions
  bool cpu = false;
  std::string half_precision_flag;  // --fp16 or --bf16 when given (refused)
  bool score_reference = false;  // fairseq's --score-reference: the references scored, not searched
  int64_t prefix_size = 0;       // fairseq's --prefix-size: hypotheses begin with the reference's first N tokens
  ComputeOptions compute;
  std::string knn_datastore;       // a split of the data dir whose pairs fill the kNN-MT datastore
  std::string knn_datastore_file;  // where the datastore is kept between runs (empty: not kept)
  nn::KnnBuildOptions knn_build;   // PCA reduction and k-means lists of the keys (0: none)
  KnnSearchFlags knn;
};

// fairseq's decode_fn: the text as printed in S-, T- and D- lines and scored, detokenized
// with --tokenizer moses.
using DecodeFn = std::function<std::string(const std::string&)>;

DecodeFn decode_fn(const GenerateArgs& args, const std::string& target_lang) {
  if (args.tokenizer.empty()) return [](const std::string& text) { return text; };
  auto detokenizer = std::make_shared<data::MosesDetokenizer>(data::parse_moses_language(target_lang));
  return [detokenizer](const std::string& text) { return detokenizer->detokenize(text); };
}

// What generate prints of sentence i: fairseq's S- and T- text (the split's lines themselves with
// --replace-unk, as fairseq prints a raw dataset's original text) and each hypothesis's text
// (--replace-unk's replacements made, post-processed).
struct SentenceText {
  const TranslationTask& task;
  const SourceSplit& corpora;
  const std::optional<UnknownWordReplacement>& unknown_words;
  const GenerateArgs& args;

  std::string source(size_t i, const std::vector<int64_t>& ids) const {
    return unknown_words ? std::string(*corpora.source.original_text(i))
                         : task.source_dict.decode(ids, args.remove_bpe);
  }
  std::string reference(size_t i, const std::vector<int64_t>& ids) const {
    return unknown_words ? std::string(*corpora.target->original_text(i))
                         : task.target_dict.decode(ids, args.remove_bpe);
  }
  std::string hypothesis(size_t i, const nn::Hypothesis& h, const std::vector<int64_t>& source_ids) const {
    if (!unknown_words) return task.target_dict.decode(h.tokens, args.remove_bpe);
    return data::post_process(
        unknown_words->replace(h, source_ids, *corpora.source.original_text(i), task.target_dict), args.remove_bpe);
  }
};

// The closing line's score: fairseq-score's BLEU4 of the re-tokenized strings, or sacreBLEU.
std::string corpus_score(const GenerateArgs& args, const std::vector<std::string>& best,
                         const std::vector<std::string>& references) {
  if (args.scoring == "sacrebleu")
    return data::format_sacrebleu_score(data::sacrebleu_corpus_score(best, {references}, {}), "");
  return data::format_fairseq_score(data::fairseq_compute(data::fairseq_stats(best, references, false)));
}

// The kNN-MT datastore of the split --knn-datastore names (one teacher-forced pass, or read
// back from --knn-datastore-file).
std::shared_ptr<const nn::KnnRetrieval> build_knn(TrainedModel& trained, const TranslationTask& task,
                                                  const GenerateArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const KnnDatastoreFromFile store =
      knn_datastore_for(*trained.model, open_split(task, args.knn_datastore), args.knn_datastore_file,
                        args.knn_build);
  std::shared_ptr<const nn::KnnRetrieval> retrieval = knn_retrieval(args.knn, store.datastore);
  std::cerr << fmt::format("kNN-MT datastore: {}\n", store.origin)
            << describe_knn_search(args.knn, *retrieval, args.knn_datastore,
                                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return retrieval;
}

// The sentences of the split to translate: all of them, each within the models' positions (one
// too long is named by its file and its number in the S- lines: translate_sentences' own check
// knows only the number), or with --skip-invalid-size-inputs-valid-test those within them.
std::vector<size_t> sentences_to_translate(const nn::ModelEnsemble& models, const data::ConcatenatedCorpus& file,
                                           const std::vector<std::vector<int64_t>>& sources, bool skip_invalid) {
  std::vector<size_t> kept;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (skip_invalid && int64_t(sources[i].size()) > models.max_source_positions()) continue;
    check_source_length(models, sources[i].size(), fmt::format("{}: sentence {} (S-{})", file.path(), i, i));
    kept.push_back(i);
  }
  if (kept.size() < sources.size())
    std::cerr << fmt::format("{} of {} sentences are longer than the model's max_source_positions {} and left out "
                             "(--skip-invalid-size-inputs-valid-test)\n",
                             sources.size() - kept.size(), sources.size(), models.max_source_positions());
  return kept;
}

std::vector<std::vector<int64_t>> sentences_at(const std::vector<std::vector<int64_t>>& all,
                                               const std::vector<size_t>& indices) {
  std::vector<std::vector<int64_t>> some;
  for (size_t i : indices) some.push_back(all[i]);
  return some;
}

// fairseq's --prefix-size N: the first N tokens of each reference (all of a shorter one, its
// </s> included), which the hypotheses must begin with; none for 0.
std::vector<std::vector<int64_t>> reference_prefixes(const std::vector<std::vector<int64_t>>& targets, int64_t size) {
  std::vector<std::vector<int64_t>> prefixes;
  if (size == 0) return prefixes;
  for (const std::vector<int64_t>& target : targets)
    prefixes.emplace_back(target.begin(), target.begin() + std::ptrdiff_t(std::min<size_t>(size_t(size), target.size())));
  return prefixes;
}

int run_generate(const GenerateArgs& args) {
  const Device device = apply_compute_options(args.compute);
  std::vector<TrainedModel> ensemble = load_trained_models(args.path, device);
  TrainedModel& trained = ensemble.front();  // its datastore serves kNN-MT (nn/search/model_ensemble.hpp)
  const nn::ModelEnsemble models = ensemble_of(ensemble);
  const TranslationTask task = open_task_for(trained, args.data_dir);
  const SourceSplit corpora = open_source_split(task, args.subset);
  const bool has_target = corpora.target.has_value();  // none: a source side alone (preprocess --only-source)
  ATTN_CHECK(has_target || (!args.score_reference && args.prefix_size == 0),
             "generate: {} has no target side (preprocess --only-source): --score-reference and --prefix-size read "
             "the references it lacks",
             corpora.source.description());
  const std::vector<std::vector<int64_t>> all_sources = corpora.source.sentences();
  const std::vector<size_t> kept = sentences_to_translate(models, corpora.source, all_sources, args.skip_invalid_size);
  const std::vector<std::vector<int64_t>> sources = sentences_at(all_sources, kept);
  const std::vector<std::vector<int64_t>> targets =
      has_target ? sentences_at(corpora.target->sentences(), kept) : std::vector<std::vector<int64_t>>{};
  const std::optional<UnknownWordReplacement> unknown_words =
      UnknownWordReplacement::from_flag(args.replace_unk, args.alignment_dictionary);
  ATTN_CHECK(!unknown_words || corpora.source.size() == 0 ||
                 (corpora.source.original_text(0) && (!has_target || corpora.target->original_text(0))),
             "generate: --replace-unk copies from the split's text, which {} does not keep (ids only): preprocess "
             "with --dataset-impl raw, as fairseq asks",
             corpora.source.description());
  const SentenceText text{task, corpora, unknown_words, args};
  DecodingOptions decoding = args.decoding;
  decoding.search.return_attention = !args.print_alignment.empty() || unknown_words.has_value();
  if (ensemble.size() > 1) std::cerr << fmt::format("decoding with an ensemble of {} models\n", ensemble.size());
  if (!args.knn_datastore.empty()) decoding.search.knn = build_knn(trained, task, args);

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<nn::Hypothesis>> hypotheses;
  if (args.score_reference) {
    for (nn::Hypothesis& h : score_references(models, sources, targets, decoding))
      hypotheses.push_back({std::move(h)});
  } else {
    hypotheses = translate_sentences(models, sources, decoding, {}, reference_prefixes(targets, args.prefix_size));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const DecodeFn decode = decode_fn(args, task.target_lang);
  std::string out;  // every line, printed or written at the end
  std::vector<std::string> best, references;
  int64_t generated_tokens = 0;
  for (size_t k = 0; k < sources.size(); ++k) {
    const size_t i = kept[k];  // the sentence's number in the split
    if (!args.quiet) out += fmt::format("S-{}\t{}\n", i, decode(text.source(i, sources[k])));
    if (has_target) references.push_back(decode(text.reference(i, targets[k])));
    if (has_target && !args.quiet) out += fmt::format("T-{}\t{}\n", i, references.back());
    // fairseq's H-, D-, P- (base 2) and A- lines of each hypothesis (--quiet: none), the best one's
    // D- text scored.
    const size_t shown = args.quiet ? 1 : hypotheses[k].size();
    for (size_t j = 0; j < shown; ++j) {
      const nn::Hypothesis& h = hypotheses[k][j];
      const std::string hypothesis = text.hypothesis(i, h, sources[k]), detokenized = decode(hypothesis);
      if (j == 0) best.push_back(detokenized);
      if (!args.quiet)
        out += hypothesis_lines(i, h, hypothesis, detokenized) + alignment_line(i, h, sources[k], args.print_alignment);
    }
    generated_tokens += int64_t(hypotheses[k].front().tokens.size());
  }
  if (has_target)  // fairseq scores only what has references
    out += fmt::format("Generate {} with beam={}: {}\n", args.subset, args.decoding.search.beam,
                       corpus_score(args, best, references));
  if (args.results_path.empty()) {
    fmt::print("{}", out);
  } else {
    data::create_folders(args.results_path, "--results-path");
    const std::string file =
        (std::filesystem::path(args.results_path) / fmt::format("generate-{}.txt", args.subset)).string();
    data::write_file_atomic(file, out);
    std::cerr << fmt::format("wrote {}\n", file);
  }
  // Once the lines are out: a failed write is the one line on standard error.
  std::cerr << fmt::format("Translated {} sentences ({} tokens) in {:.1f}s ({:.2f} sentences/s, {:.2f} tokens/s)\n",
                           sources.size(), generated_tokens, seconds, double(sources.size()) / seconds,
                           double(generated_tokens) / seconds);
  return 0;
}

CommandAction setup_generate(CLI::App& cmd) {
  auto args = std::make_shared<GenerateArgs>();
  nn::SearchOptions& search = args->decoding.search;
  add_data_dir_argument(cmd, args->data_dir, "Preprocessed data dir");
  cmd.add_option("--path", args->path,
                 "Checkpoint (NAME, NAME.safetensors or NAME.json); A:B:C decodes an ensemble of them")
      ->required();
  cmd.add_option("--subset,--gen-subset", args->subset, "Split to translate")->capture_default_str();
  add_search_options(cmd, search, args->sampling);
  cmd.add_option("--min-len", search.min_len, "Minimum output length")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--nbest", search.nbest, "Hypotheses printed per sentence")
      ->check(positive_number())
      ->capture_default_str();
  add_optional_choice(cmd, "--post-process,--remove-bpe", args->remove_bpe,
                      "Post-process the S-, T-, H- and D- text by the subword scheme (fairseq's flag; given alone: "
                      "remove subword-nmt's '@@ ')",
                      data::post_process_schemes());
  cmd.add_option("--batch-size,--max-sentences", args->decoding.max_sentences, "Sentences per batch")
      ->check(positive_number());
  cmd.add_option("--max-tokens", args->decoding.max_tokens, "Source tokens per batch, padding included")
      ->check(positive_number());
  cmd.add_flag("--quiet", args->quiet, "Print only the BLEU line");
  cmd.add_flag("--score-reference", args->score_reference,
               "Print the references as the hypotheses, scored by the model(s) (no search)");
  cmd.add_option("--prefix-size", args->prefix_size,
                 "Begin every hypothesis with the reference's first N tokens (fairseq's; 0: off)")
      ->check(non_negative_number())
      ->capture_default_str();
  add_option_noting_typed(cmd, "--replace-unk", args->alignment_dictionary, args->replace_unk,
                          "Replace each <unk> of a hypothesis by the source word its cross-attention weighs most "
                          "(the split must be raw text: preprocess --dataset-impl raw); with a file (lines 'SOURCE "
                          "REPLACEMENT'), by that word's replacement there")
      ->expected(0, 1);
  // A value of its own or none, as fairseq's flag: `--print-alignment`, `--print-alignment soft`.
  add_optional_choice(cmd, "--print-alignment", args->print_alignment,
                      "Print A- lines: hard (given alone), each output word aligned to the source word its "
                      "cross-attention weighs most; soft, the weights of every source token for every output token",
                      {"hard", "soft"});
  cmd.add_option("--knn-datastore", args->knn_datastore,
                 "kNN-MT (Khandelwal et al. 2021): a split of the data dir (e.g. train) whose decoder states the "
                 "search consults");
  cmd.add_option("--knn-datastore-file", args->knn_datastore_file,
                 "kNN-MT: keep the datastore in this file (built once per model and split, then read back)");
  cmd.add_option("--knn-reduced-dims", args->knn_build.reduced_dims,
                 "kNN-MT: project the keys and queries onto their N principal axes (PCA) for a faster search "
                 "(0: the full decoder states)")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--knn-lists", args->knn_build.lists,
                 "kNN-MT: split the keys into N k-means lists (an IVF index) when the datastore is built "
                 "(0: none; an exact search)")
      ->check(non_negative_number())
      ->capture_default_str();
  add_knn_search_options(cmd, args->knn);
  cmd.add_option("--results-path", args->results_path,
                 "Write the lines to DIR/generate-SUBSET.txt instead of standard output");
  cmd.add_option("--scoring", args->scoring, "The closing line's BLEU: bleu (fairseq-score's BLEU4) or sacrebleu (13a)")
      ->check(CLI::IsMember({"bleu", "sacrebleu"}))
      ->capture_default_str();
  cmd.add_option("--tokenizer", args->tokenizer,
                 "moses: detokenize the S-, T- and D- lines and the scored text (the target language's rules)")
      ->check(CLI::IsMember({"moses"}));
  cmd.add_flag("--skip-invalid-size-inputs-valid-test", args->skip_invalid_size,
               "Leave out sentences longer than the model's max_source_positions instead of refusing the split");
  cmd.add_flag("--cpu", args->cpu, "fairseq's name for --device cpu (the default)");
  for (const std::string flag : {"--fp16", "--bf16"})
    cmd.add_flag_callback(flag, [args, flag] { args->half_precision_flag = flag; }, "Refused: see --matmul-precision");
  add_compute_options(cmd, args->compute);
  return [args] {
    ATTN_CHECK(args->half_precision_flag.empty(),
               "generate: {}: attnlab decodes with float32 weights; --matmul-precision bf16 gives bfloat16 matrix "
               "products with float32 sums (CPUs with AVX512-BF16 or AMX, and GPUs)",
               args->half_precision_flag);
    ATTN_CHECK(!args->cpu || args->compute.device == "cpu", "generate: --cpu and --device {} ask for two devices",
               args->compute.device);
    const nn::SearchOptions& requested = args->decoding.search;
    ATTN_CHECK(requested.nbest <= requested.beam, "generate: --nbest ({}) > --beam ({})", requested.nbest,
               requested.beam);
    // With --max-len-a 0 every sentence's longest output is --max-len-b (or less, by the model's
    // positions): refused before the model loads. Otherwise translate_sentences checks each batch.
    ATTN_CHECK(!nn::min_len_beyond_every_max_len(requested),
               "generate: --min-len ({}) is larger than --max-len-b ({}), the longest output any sentence may have "
               "with --max-len-a 0; fairseq refuses this too",
               requested.min_len, requested.max_len_b);
    apply_sampling_flags(args->sampling, args->decoding.search);
    ATTN_CHECK(!args->score_reference || args->knn_datastore.empty(),
               "generate: --score-reference scores with the model(s) alone; leave out --knn-datastore");
    ATTN_CHECK(!args->score_reference || args->prefix_size == 0,
               "generate: --score-reference searches nothing; leave out --prefix-size");
    return run_generate(*args);
  };
}

const CommandRegistration generate_command("generate", "Translate a binarized split with beam search (fairseq-generate)",
                                           setup_generate);

}  // namespace
}  // namespace attn::app
