// `attnlab preprocess`: fairseq-preprocess for translation (docs/mt-tools.md §4): builds or
// loads the dictionaries, writes DESTDIR/dict.SRC.txt and dict.TGT.txt, and binarizes each
// split into DESTDIR/SPLIT.SRC-TGT.LANG.bin (data/binarized_corpus.hpp; with --dataset-impl mmap
// fairseq's .bin and .idx, data/fairseq_mmap_index.hpp, with lazy or cached those of its older
// format, data/fairseq_lazy_index.hpp; with --dataset-impl raw the text itself,
// DESTDIR/SPLIT.SRC-TGT.LANG, encoded when read), reporting sentences,
// tokens and the share of words replaced by <unk>. Every input is read and checked (UTF-8,
// equal line counts, dictionary format) before anything is written, and the files are replaced
// together once all are written (data/text_io.hpp OutputFiles): a bad input, a full disk or a
// folder in a file's place leaves DESTDIR as it was.
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "data/alignment_dictionary.hpp"
#include "data/binarized_corpus.hpp"
#include "data/dictionary.hpp"
#include "data/parallel_corpus.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

// The largest --padding-factor: fairseq pads to a multiple of 8 (its default) or of 64 or 128 for
// tensor cores; 2^20 lets a dictionary of up to a million words be padded to one block, and a
// larger factor would only add madeupwords by the million (10^9 ran out of memory).
constexpr int64_t kMaxPaddingFactor = int64_t(1) << 20;

struct PreprocessOptions {
  std::string source_lang, target_lang;
  std::string train_prefix, valid_prefix, test_prefix, dest_dir = "data-bin";
  bool joined_dictionary = false;
  bool target_first = false;  // the joined dictionary begins with the target dictionary
  bool only_source = false;   // the source side alone: its dictionary and splits (fairseq's --only-source)
  bool dict_only = false;     // the dictionaries alone, no split
  std::string alignment_file;  // --alignfile: the training pairs' word alignments, for alignment.SRC-TGT.txt
  std::string source_dict, target_dict;
  int64_t threshold_source = 0, threshold_target = 0;
  int64_t nwords_source = -1, nwords_target = -1;
  int64_t padding_factor = 8;
  int workers = 1;
  std::string dataset_impl = "attnlab";  // or fairseq's "mmap", "lazy", "cached", "raw"
};

// The file format of a --dataset-impl other than raw: fairseq's lazy and cached are one.
data::BinarizedFormat binarized_format(const std::string& dataset_impl) {
  if (dataset_impl == "mmap") return data::BinarizedFormat::kFairseqMmap;
  if (dataset_impl == "lazy" || dataset_impl == "cached") return data::BinarizedFormat::kFairseqLazy;
  return data::BinarizedFormat::kAttnlab;
}

data::Dictionary load_or_build(const std::string& dict_path, const std::vector<std::string>& train_files,
                               int64_t threshold, int64_t nwords, const PreprocessOptions& options) {
  if (!dict_path.empty()) return data::Dictionary::load(dict_path);
  if (options.train_prefix.empty())
    throw data::DataError("--trainpref is needed to build a dictionary (or pass --srcdict/--tgtdict)");
  return data::build_dictionary(train_files, threshold, nwords, options.padding_factor, options.workers);
}

std::pair<data::Dictionary, data::Dictionary> make_dictionaries(const PreprocessOptions& options) {
  auto train_file = [&](const std::string& lang) { return options.train_prefix + "." + lang; };
  if (options.target_first) {  // built, not given: checked in run_preprocess
    const data::Dictionary target = data::build_dictionary({train_file(options.target_lang)}, options.threshold_target,
                                                           options.nwords_target, options.padding_factor, options.workers);
    const data::Dictionary source = data::build_dictionary({train_file(options.source_lang)}, options.threshold_source,
                                                           options.nwords_source, /*padding_factor=*/1, options.workers);
    return {data::target_first_joined_dictionary(target, source, options.padding_factor), target};
  }
  if (options.joined_dictionary) {
    std::string given = options.source_dict.empty() ? options.target_dict : options.source_dict;
    data::Dictionary joined =
        load_or_build(given, {train_file(options.source_lang), train_file(options.target_lang)},
                      options.threshold_source, options.nwords_source, options);
    return {joined, joined};
  }
  data::Dictionary source = load_or_build(options.source_dict, {train_file(options.source_lang)},
                                          options.threshold_source, options.nwords_source, options);
  if (options.only_source) return {std::move(source), data::Dictionary{}};  // no target side: not written
  return {std::move(source), load_or_build(options.target_dict, {train_file(options.target_lang)},
                                           options.threshold_target, options.nwords_target, options)};
}

// "train" -> [(train, P)]; "valid" with "P1,P2" -> [(valid, P1), (valid1, P2)] as fairseq names them.
std::vector<std::pair<std::string, std::string>> split_prefixes(const std::string& split, const std::string& prefixes) {
  std::vector<std::pair<std::string, std::string>> named;
  if (prefixes.empty()) return named;
  size_t start = 0;
  for (size_t k = 0;; ++k) {
    size_t comma = prefixes.find(',', start);
    named.emplace_back(k == 0 ? split : split + std::to_string(k), prefixes.substr(start, comma - start));
    if (comma == std::string::npos) return named;
    start = comma + 1;
  }
}

struct NamedSplit {
  std::string name;  // train, valid, valid1, ..., test
  data::ParallelCorpus corpus;
};

// Every split the options name, read and checked (UTF-8, equal line counts); the source side
// alone with --only-source, none with --dict-only.
std::vector<NamedSplit> read_splits(const PreprocessOptions& options) {
  std::vector<NamedSplit> splits;
  if (options.dict_only) return splits;
  for (const auto& [split, prefixes] : {std::pair{"train", options.train_prefix}, {"valid", options.valid_prefix},
                                        {"test", options.test_prefix}})
    for (const auto& [name, prefix] : split_prefixes(split, prefixes)) {
      data::ParallelCorpus corpus;
      if (options.only_source) {
        corpus.source_path = prefix + "." + options.source_lang;
        corpus.source = data::read_lines(corpus.source_path);
      } else {
        corpus = data::read_parallel_corpus(prefix, options.source_lang, options.target_lang);
      }
      splits.push_back({name, std::move(corpus)});
    }
  return splits;
}

int run_preprocess(PreprocessOptions options) {
  // The paths below are DESTDIR/NAME: an empty --destdir would make them /NAME, in the root
  // folder. It means the current folder, as `prepare ding --out ''` does.
  if (options.dest_dir.empty()) options.dest_dir = ".";
  // One language on both sides would name the same dict.LANG.txt and SPLIT.LANG-LANG.LANG.bin for
  // both: fairseq writes each twice, the target side's last, over the source side's.
  if (options.source_lang == options.target_lang)
    throw data::DataError(fmt::format("--source-lang and --target-lang are both '{0}': both sides would be written to "
                                      "the same files (dict.{0}.txt, SPLIT.{0}-{0}.{0}.bin)",
                                      options.source_lang));
  if (options.joined_dictionary && !options.source_dict.empty() && !options.target_dict.empty())
    throw data::DataError("--joined-dictionary takes --srcdict or --tgtdict, not both");
  if (options.target_first && (!options.joined_dictionary || options.train_prefix.empty() ||
                               !options.source_dict.empty() || !options.target_dict.empty()))
    throw data::DataError("--target-first builds a --joined-dictionary from the training text: pass --joined-dictionary "
                          "and --trainpref, and no --srcdict or --tgtdict");
  if (options.target_first && options.only_source)
    throw data::DataError("--target-first orders the target side's symbols first, which --only-source leaves out");
  if (!options.alignment_file.empty() && (options.train_prefix.empty() || options.only_source || options.dict_only))
    throw data::DataError(
        "--alignfile aligns the words of the training pairs: it needs --trainpref, and both sides "
        "(no --only-source or --dict-only)");
  const std::vector<NamedSplit> splits = read_splits(options);
  auto [source_dict, target_dict] = make_dictionaries(options);

  data::create_folders(options.dest_dir, "--destdir");
  data::OutputFiles outputs;  // the dictionaries and every split, replaced together
  struct Side {
    std::string lang;
    const data::Dictionary* dictionary;
    bool is_source;
  };
  std::vector<Side> sides = {{options.source_lang, &source_dict, true}};
  if (!options.only_source) sides.push_back({options.target_lang, &target_dict, false});
  for (const auto& [lang, dictionary, is_source] : sides) {
    std::cout << fmt::format("[{}] Dictionary: {} types\n", lang, dictionary->size());
    outputs.add(fmt::format("{}/{}", options.dest_dir, data::dictionary_file_name(lang)), dictionary->to_text());
  }
  for (const auto& [name, corpus] : splits) {
    for (const auto& [lang, dictionary, is_source] : sides) {
      const std::vector<std::string>& lines = is_source ? corpus.source : corpus.target;
      if (options.dataset_impl == "raw") {  // fairseq copies the text beside the dictionaries
        std::string text;
        for (const std::string& line : lines) text += line + "\n";
        outputs.add(data::raw_text_path(options.dest_dir, name, options.source_lang, options.target_lang, lang), text);
        continue;
      }
      std::string out = data::binarized_path(options.dest_dir, name, options.source_lang, options.target_lang, lang);
      data::BinarizeStats stats = data::binarize_lines(lines, *dictionary, out, outputs, options.workers,
                                                       binarized_format(options.dataset_impl));
      std::cout << data::binarize_report(lang, name, stats) << "\n";
    }
  }
  if (!options.alignment_file.empty()) {  // fairseq's alignment dictionary, for --replace-unk
    const data::ParallelCorpus& train = splits.front().corpus;
    outputs.add(fmt::format("{}/alignment.{}-{}.txt", options.dest_dir, options.source_lang, options.target_lang),
                data::alignment_dictionary_text(options.alignment_file, train.source, train.source_path, train.target,
                                                train.target_path, source_dict, target_dict));
  }
  outputs.commit();
  if (!options.dict_only) std::cout << fmt::format("Wrote preprocessed data to {}\n", options.dest_dir);
  return 0;
}

CommandRegistration preprocess_command(
    "preprocess", "Build dictionaries and binarize a parallel corpus (fairseq-preprocess)",
    [](CLI::App& cmd) -> CommandAction {
      auto options = std::make_shared<PreprocessOptions>();
      cmd.add_option("-s,--source-lang", options->source_lang, "Source language suffix")->required();
      cmd.add_option("-t,--target-lang", options->target_lang, "Target language suffix")->required();
      cmd.add_option("--trainpref", options->train_prefix, "Train file prefix (PREFIX.SRC, PREFIX.TGT)");
      cmd.add_option("--validpref", options->valid_prefix, "Valid file prefix(es), comma-separated");
      cmd.add_option("--testpref", options->test_prefix, "Test file prefix(es), comma-separated");
      cmd.add_option("--destdir", options->dest_dir, "Output directory")->capture_default_str();
      cmd.add_flag("--joined-dictionary", options->joined_dictionary, "One dictionary for both languages");
      cmd.add_flag("--target-first", options->target_first,
                   "With --joined-dictionary: the target side's symbols first, and the target dictionary only "
                   "those, so a model sharing all embeddings predicts only them");
      cmd.add_flag("--only-source", options->only_source,
                   "The source side alone: its dictionary (joined: of both training sides) and its splits, no "
                   "target files (monolingual text for generate, as fairseq's back-translation recipe)");
      cmd.add_flag("--dict-only", options->dict_only, "Write the dictionaries only, no split");
      cmd.add_option("--alignfile", options->alignment_file,
                     "Word alignments of the training pairs (lines of 'i-j', as fast_align prints them): also write "
                     "alignment.SRC-TGT.txt, each source word's most frequent aligned target word, for "
                     "generate/translate --replace-unk");
      cmd.add_option("--srcdict", options->source_dict, "Reuse this source dict.txt");
      cmd.add_option("--tgtdict", options->target_dict, "Reuse this target dict.txt");
      add_integer_option(cmd, "--thresholdsrc", options->threshold_source, "Drop source words seen fewer times")
          ->capture_default_str();
      add_integer_option(cmd, "--thresholdtgt", options->threshold_target, "Drop target words seen fewer times")
          ->capture_default_str();
      add_integer_option(cmd, "--nwordssrc", options->nwords_source, "Source dictionary size incl. specials (-1: all)")
          ->capture_default_str();
      add_integer_option(cmd, "--nwordstgt", options->nwords_target, "Target dictionary size incl. specials (-1: all)")
          ->capture_default_str();
      add_integer_option(cmd, "--padding-factor", options->padding_factor,
                         "Pad dictionary size to a multiple of this (1: no padding)", 1, kMaxPaddingFactor)
          ->capture_default_str();
      cmd.add_option("--workers", options->workers, "Threads")->check(thread_count())->capture_default_str();
      cmd.add_option("--dataset-impl", options->dataset_impl,
                     "attnlab: its own checked format; mmap: fairseq's default format (.bin + .idx), which "
                     "fairseq-train reads too; lazy, cached: fairseq's older format (one format, two ways fairseq "
                     "reads it); raw: the text itself (SPLIT.SRC-TGT.LANG), encoded when read, whose lines "
                     "generate --replace-unk copies from")
          ->check(CLI::IsMember({"attnlab", "mmap", "lazy", "cached", "raw"}))
          ->capture_default_str();
      return [options] { return run_preprocess(*options); };
    });

}  // namespace
}  // namespace attn::app
