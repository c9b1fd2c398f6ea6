// `attnlab translate --path CKPT`: raw sentences on stdin (or --input FILE) -> translations
// on stdout, through the whole text pipeline: Moses tokenizer (docs/mt-tools.md §2) -> BPE
// (§1; the codes the checkpoint recorded, or --bpe-codes, or `codes` beside the checkpoint;
// none with --no-bpe) -> dictionary ids -> beam search (docs/models.md §1.10) -> BPE removed
// (--post-process) -> Moses detokenizer. Output order = input order; empty input lines give
// empty output lines. With --nbest N each line gives N lines, its hypotheses best first (an
// empty line gives N empty ones). A terminal's lines are translated as they are typed, other
// input batched whole (--buffer-size: lines per batch of reading, translating and printing).
// --knn-datastore-file: kNN-MT over a datastore generate or the demo kept, as the demo decodes.
// fairseq-interactive's ways: --constraints [ordered|unordered] reads tab-separated target
// phrases after each source that every translation must contain (lexically constrained
// decoding, docs/models.md §1.10.6); --fairseq-lines prints its S-, W-, C-, H-, D- and P- lines
// (scores in base 2; A- with --print-alignment) in place of the translations alone, every line
// translated, empty or not; --replace-unk [DICT] replaces each <unk> of a translation by the
// source symbol aligned to it, or by that symbol's entry in DICT.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string_view>

#include <unistd.h>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/cli/compute_options.hpp"
#include "apps/cli/knn_options.hpp"
#include "apps/cli/search_options.hpp"
#include "apps/generation/fairseq_lines.hpp"
#include "apps/generation/knn_datastore_file.hpp"
#include "apps/generation/translator.hpp"
#include "apps/generation/unknown_word_replacement.hpp"
#include "apps/task/raw_text.hpp"
#include "apps/task/translation_task.hpp"
#include "apps/training/checkpoint.hpp"
#include "data/bleu_tokenizers.hpp"
#include "data/moses_detokenizer.hpp"
#include "data/post_process.hpp"
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
  std::string print_alignment;  // "hard" or "soft" when asked for (A- lines, with --fairseq-lines)
  int64_t buffer_size = 0;  // fairseq-interactive's --buffer-size (0: see lines_per_buffer)
  std::string input = "-";  // fairseq-interactive's --input: a file, or - for standard input
  std::string post_process = "subword_nmt";  // how the output symbols become text (data/post_process.hpp)
  bool post_process_given = false;  // --post-process typed: fairseq-interactive then applies it to S-, C- and H- too
  std::string knn_datastore_file;  // kNN-MT over a datastore generate or the demo kept (empty: off)
  bool replace_unk = false;        // fairseq's --replace-unk: each <unk> replaced by its aligned source symbol
  std::string alignment_dictionary;  // ... or by that symbol's entry in this file (empty: the symbol itself)
  KnnSearchFlags knn;
  ComputeOptions compute;
};

// One line of the input: the source's ids (</s> last) and, with --constraints, the ids of the
// target phrases that follow it, tab-separated; with --replace-unk, the source's symbols.
struct InputLine {
  std::vector<int64_t> source;
  nn::Constraints constraints;
  std::string source_symbols;  // the segmented source: a symbol per id before the </s>
};

// fairseq-interactive's reading of a line with --constraints: whitespace stripped from both
// ends, then the fields between tabs.
std::vector<std::string> tab_separated_fields(const std::string& line) {
  const std::string stripped(data::strip_python_whitespace(line));  // Python's str.strip()
  std::vector<std::string> fields;
  for (size_t start = 0;;) {
    const size_t tab = stripped.find('\t', start);
    fields.push_back(stripped.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

// Constraint k of line `number` of `file`: its text tokenized and segmented as target text,
// without </s>.
std::vector<int64_t> encode_constraint(const std::string& text, size_t k, const std::string& file, size_t number,
                                       const RawTextEncoder& target_encoder) {
  std::vector<int32_t> ids = target_encoder.encode(text, file, number);
  ids.pop_back();  // </s>
  if (ids.empty()) throw Error(fmt::format("{}:{}: constraint {} is empty", file, number, k));
  for (int32_t id : ids)
    if (id == data::Dictionary::kBos || id == data::Dictionary::kPad || id == data::Dictionary::kEos)
      throw Error(fmt::format("{}:{}: constraint {} holds {}, a symbol no translation contains", file, number, k,
                              target_encoder.dictionary().symbol(id)));
  if (std::find(ids.begin(), ids.end(), data::Dictionary::kUnk) != ids.end())
    std::cerr << fmt::format("{}:{}: constraint {} ('{}') holds symbols the target dictionary lacks: the "
                             "translation must then contain <unk>\n",
                             file, number, k, text);
  return {ids.begin(), ids.end()};
}

// Line `number` of `file`; with a target encoder (--constraints), its first field is the
// source and the others are constraints.
InputLine read_line(const std::string& line, const std::string& file, size_t number,
                    const RawTextEncoder& source_encoder, const RawTextEncoder* target_encoder,
                    bool keep_source_symbols) {
  const std::vector<std::string> fields =
      target_encoder ? tab_separated_fields(line) : std::vector<std::string>{line};
  std::string symbols = source_encoder.segment(fields.front(), file, number);
  const std::vector<int32_t> source = source_encoder.dictionary().encode_line(symbols).ids;
  InputLine input{{source.begin(), source.end()}, {}, keep_source_symbols ? std::move(symbols) : std::string()};
  for (size_t k = 1; k < fields.size(); ++k)
    input.constraints.push_back(encode_constraint(fields[k], k, file, number, *target_encoder));
  return input;
}

// A translation that reached the maximum length before meeting all its constraints (the
// search lets it end there, constraints unmet) is named on standard error.
void warn_unmet_constraints(const nn::Hypothesis& h, const nn::Constraints& constraints, nn::ConstraintOrder order,
                            const std::string& file, size_t number) {
  nn::ConstraintState state(std::make_shared<const nn::ConstraintSet>(constraints, order));
  for (size_t t = 0; t + 1 < h.tokens.size(); ++t) state = state.advance(h.tokens[t]);
  if (!state.finished())
    std::cerr << fmt::format(
        "{}:{}: the translation reached the maximum length (--max-len-a, --max-len-b) "
        "without every constraint\n",
        file, number);
}

// What translating the lines of a buffer needs, set up once.
struct LineTranslator {
  const TranslateArgs& args;
  const nn::ModelEnsemble& models;
  const TranslationTask& task;
  RawTextEncoder source_encoder, target_encoder;
  data::MosesDetokenizer detokenizer;
  DecodingOptions decoding;
  std::optional<UnknownWordReplacement> unknown_words;  // with --replace-unk
  std::string input_name;  // the input file, or <stdin>, as errors name it

  // Translates `lines` (the first is line `first_number` of the input) and prints their
  // translations. A line without any tokens or constraints is answered with an empty line (with
  // --fairseq-lines it is translated, as fairseq-interactive does).
  void translate(const std::vector<std::string>& lines, size_t first_number) const {
    std::vector<InputLine> inputs;
    std::vector<size_t> input_of(lines.size(), SIZE_MAX);  // each line's input, if translated
    for (size_t k = 0; k < lines.size(); ++k) {
      const size_t number = first_number + k;
      InputLine input = read_line(lines[k], input_name, number, source_encoder,
                                  decoding.search.constraint_order ? &target_encoder : nullptr,
                                  unknown_words.has_value());
      check_source_length(models, input.source.size(), fmt::format("{}:{}", input_name, number));
      if (input.source.size() == 1 && input.constraints.empty() && !args.fairseq_lines) continue;  // only </s>
      input_of[k] = inputs.size();
      inputs.push_back(std::move(input));
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
    for (size_t k = 0; k < lines.size(); ++k) {
      if (input_of[k] == SIZE_MAX)
        std::cout << std::string(size_t(decoding.search.nbest), '\n');
      else
        print(inputs[input_of[k]], hypotheses[input_of[k]], first_number + k, seconds_each);
    }
  }

  // The translations of line `number`, or fairseq-interactive's lines for it (ids from 0).
  void print(const InputLine& input, const std::vector<nn::Hypothesis>& hypotheses, size_t number,
             double seconds) const {
    const size_t id = number - 1;
    // fairseq-interactive's S-, C- and H- text: post-processed only by a --post-process typed.
    const std::string_view lines_scheme = args.post_process_given ? std::string_view(args.post_process) : "";
    if (args.fairseq_lines) {
      std::cout << fmt::format("S-{}\t{}\nW-{}\t{:.3f}\tseconds\n", id,
                               task.source_dict.decode(input.source, lines_scheme), id, seconds);
      for (const std::vector<int64_t>& constraint : input.constraints)
        std::cout << fmt::format("C-{}\t{}\n", id, task.target_dict.decode(constraint, lines_scheme));
    }
    for (const nn::Hypothesis& h : hypotheses) {
      if (decoding.search.constraint_order)
        warn_unmet_constraints(h, input.constraints, *decoding.search.constraint_order, input_name, number);
      const std::string symbols = unknown_words
                                      ? unknown_words->replace(h, input.source, input.source_symbols, task.target_dict)
                                      : task.target_dict.decode(h.tokens);
      const std::string tokens = data::post_process(symbols, args.post_process);
      const std::string text = args.no_tokenize ? tokens : detokenizer.detokenize(tokens);
      std::cout << (args.fairseq_lines ? hypothesis_lines(id, h, data::post_process(symbols, lines_scheme), text) +
                                             alignment_line(id, h, input.source, args.print_alignment)
                                       : text + "\n");
    }
  }
};

// fairseq-interactive's --buffer-size: the lines read before they are translated; 0 is one
// line at a time from a terminal (each translation printed as its line is typed) and the whole
// input otherwise (batched by length, the fastest).
size_t lines_per_buffer(int64_t buffer_size, bool from_standard_input) {
  if (buffer_size > 0) return size_t(buffer_size);
  return from_standard_input && ::isatty(STDIN_FILENO) == 1 ? 1 : SIZE_MAX;
}

// The search translate's flags ask for: --constraints, and kNN-MT over --knn-datastore-file
// with the first model's states (as an ensemble's generate).
DecodingOptions decoding_for(const TranslateArgs& args, const nn::EncoderDecoderModel& first_model) {
  DecodingOptions decoding = args.decoding;
  decoding.search.return_attention = !args.print_alignment.empty() || args.replace_unk;
  if (!args.constraints.empty())
    decoding.search.constraint_order =
        args.constraints == "unordered" ? nn::ConstraintOrder::unordered : nn::ConstraintOrder::ordered;
  if (!args.knn_datastore_file.empty()) {
    const auto start = std::chrono::steady_clock::now();
    const KnnDatastoreFromFile store = read_knn_datastore(first_model, args.knn_datastore_file);
    decoding.search.knn = knn_retrieval(args.knn, store.datastore);
    std::cerr << describe_knn_search(args.knn, *decoding.search.knn, args.knn_datastore_file,
                                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return decoding;
}

// Reads `in` in buffers of lines_per_buffer() lines, each translated and printed before the
// next is read; `file` is the input file when not standard input (its read errors reported).
void translate_input(std::istream& in, std::ifstream* file, const TranslateArgs& args,
                     const LineTranslator& translator) {
  const size_t buffer = lines_per_buffer(args.buffer_size, file == nullptr);
  for (size_t lines_read = 0;;) {
    std::vector<std::string> lines;
    for (std::string line; lines.size() < buffer && std::getline(in, line);) lines.push_back(line);
    if (file && lines.size() < buffer) data::check_read(*file, args.input);
    if (lines.empty()) return;
    translator.translate(lines, lines_read + 1);
    std::cout.flush();
    lines_read += lines.size();
  }
}

int run_translate(const TranslateArgs& args) {
  const bool from_standard_input = args.input == "-";
  std::ifstream file;
  if (!from_standard_input) file = data::open_input_file(args.input);  // before the model loads
  std::optional<UnknownWordReplacement> unknown_words =
      UnknownWordReplacement::from_flag(args.replace_unk, args.alignment_dictionary);
  const Device device = apply_compute_options(args.compute);
  const std::vector<TrainedModel> trained = load_trained_models(args.path, device);
  const nn::ModelEnsemble models = ensemble_of(trained);
  const TranslationTask& task = trained.front().task;
  const std::string bpe_codes =
      args.no_bpe ? "" : find_bpe_codes(task, first_checkpoint(args.path), args.bpe_codes, "translate");
  const LineTranslator translator{args,
                                  models,
                                  task,
                                  RawTextEncoder(task.source_lang, bpe_codes, task.source_dict, !args.no_tokenize),
                                  RawTextEncoder(task.target_lang, bpe_codes, task.target_dict, !args.no_tokenize),
                                  data::MosesDetokenizer(data::parse_moses_language(task.target_lang)),
                                  decoding_for(args, *trained.front().model),
                                  std::move(unknown_words),
                                  from_standard_input ? "<stdin>" : args.input};
  if (from_standard_input)
    translate_input(data::standard_input(), nullptr, args, translator);
  else
    translate_input(file, &file, args, translator);
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
  add_option_noting_typed(cmd, "--post-process", args->post_process, args->post_process_given,
                          "How the output's symbols become text, by fairseq's subword schemes (sentencepiece for a "
                          "model whose data SentencePiece segmented; none: the symbols as they are); typed, also the "
                          "S-, C- and H- text of --fairseq-lines")
      ->check(CLI::IsMember(data::post_process_schemes()));
  add_search_options(cmd, search, args->sampling);
  cmd.add_option("--nbest", search.nbest, "Translations printed per input line, best first (at most --beam)")
      ->check(positive_number())
      ->capture_default_str();
  add_optional_choice(cmd, "--constraints", args->constraints,
                      "Lexically constrained decoding: each input line is SOURCE<tab>PHRASE<tab>PHRASE..., and every "
                      "translation contains each target PHRASE; ordered (given alone): in the order given; "
                      "unordered: in any order",
                      {"ordered", "unordered"});
  add_optional_choice(cmd, "--print-alignment", args->print_alignment,
                      "With --fairseq-lines, print A- lines: hard (given alone), each output word aligned to the "
                      "source word its cross-attention weighs most; soft, the weights",
                      {"hard", "soft"});
  add_option_noting_typed(cmd, "--replace-unk", args->alignment_dictionary, args->replace_unk,
                          "Replace each <unk> of a translation by the source symbol its cross-attention weighs most; "
                          "with a file (lines 'SOURCE REPLACEMENT'), by that symbol's replacement there")
      ->expected(0, 1);
  cmd.add_option("--input", args->input, "Read the sentences from this file instead of standard input (-)")
      ->capture_default_str();
  cmd.add_option("--buffer-size", args->buffer_size,
                 "Lines read before they are translated and printed (fairseq-interactive's flag; 0: one at a time "
                 "from a terminal, the whole input otherwise)")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_flag("--fairseq-lines", args->fairseq_lines,
               "Print fairseq-interactive's S-, W-, C-, H-, D- and P- lines (scores in base 2) instead of the "
               "translations alone");
  cmd.add_option("--knn-datastore-file", args->knn_datastore_file,
                 "kNN-MT (Khandelwal et al. 2021) over the datastore in this file, which generate "
                 "--knn-datastore-file or the demo wrote for this model")
      ->check(CLI::ExistingFile);
  add_knn_search_options(cmd, args->knn);
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
    ATTN_CHECK(args->print_alignment.empty() || args->fairseq_lines,
               "translate: --print-alignment prints A- lines, which come with --fairseq-lines");
    return run_translate(*args);
  };
}

const CommandRegistration translate_command("translate",
                                            "Translate raw sentences from stdin or --input (tokenize, BPE, decode)",
                                            setup_translate);

}  // namespace
}  // namespace attn::app
