// `attnlab score --ref REF [--ref REF2 …] < HYP`: BLEU of the hypotheses on stdin, printed
// the way one of three reference tools prints it (docs/mt-tools.md §3, docs/models.md §1.12):
//
//   --format sacrebleu   (default) sacreBLEU 2.x text line with its signature, corpus or
//                        --sentence level; --tokenize, --smooth, --smooth-value, --width;
//   --format multi-bleu  multi-bleu.perl's line, for tokenized text;
//   --format fairseq     fairseq-score's line (one reference); -o N, --sentence-bleu.
//
// -i FILE… reads the hypotheses from files instead of stdin; with --paired-bs or --paired-ar the
// first is the baseline and each other system is compared with it by sacreBLEU's paired bootstrap
// or approximate randomization test (data/bleu_significance.hpp; --paired-bs-n resamples,
// --paired-ar-n trials, the seed from SACREBLEU_SEED as in sacreBLEU: 12345 by default, `none`
// for one from the OS). --confidence adds to one system's corpus BLEU the mean and 95% interval
// of its resamples, as sacreBLEU's --confidence does. --json prints one system's corpus score as
// sacreBLEU's default JSON, --score-only the score alone, --short the short signature.
//
// -m chrf scores chrF instead, -m ter TER, -m bleu chrf ter all three (one line each, sacreBLEU's
// order and alignment; --json: a list), as sacreBLEU's -m does, with its --chrf-* options
// (data/chrf.hpp; --chrf-word-order 2 is chrF++) and --ter-* options (data/ter.hpp). chrF and TER
// have no paired tests or --confidence here, and are for --format sacrebleu only.
//
// --lowercase means each tool's own case folding (sacreBLEU -lc and fairseq --ignore-case:
// full Unicode; multi-bleu -lc: ASCII only). --compound-split applies the WMT14 EN-DE
// `##AT##-##AT##` rewrite to hypotheses and references first. Lines end at '\n' only (a '\r'
// inside a line is whitespace; sacreBLEU's stdin would split there and treat tabs as
// separate systems).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <optional>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "data/bleu.hpp"
#include "data/bleu_significance.hpp"
#include "data/chrf.hpp"
#include "data/ter.hpp"
#include "data/standard_streams.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

struct ScoreOptions {
  std::vector<std::string> references, inputs;
  std::string format = "sacrebleu", tokenize = "13a", smooth = "exp";
  double smooth_value = 0;
  bool lowercase = false, sentence = false, compound_split = false, paired_bs = false, paired_ar = false,
       confidence = false, json = false, score_only = false, short_signature = false;
  int width = 1, paired_bs_samples = 1000, paired_ar_trials = 10000, confidence_samples = 1000;
  // Options that only sacreBLEU has (to reject them for the other formats).
  std::vector<CLI::Option*> sacrebleu_only;
  int fairseq_order = 4;       // fairseq-score -o: BLEU over n-grams up to this order
  bool sentence_bleu = false;  // fairseq-score --sentence-bleu
  std::vector<CLI::Option*> fairseq_only;
  CLI::Option* smooth_value_option = nullptr;  // unset: the smoothing method's default
  std::vector<std::string> metrics = {"bleu"};  // as given: sacreBLEU's -m
  data::ChrfOptions chrf;
  std::vector<CLI::Option*> chrf_only;  // the --chrf-* options (to reject them without -m chrf)
  data::TerOptions ter;
  std::vector<CLI::Option*> ter_only;  // the --ter-* options (to reject them without -m ter)
};

const std::string kStdin = "/dev/stdin";

// The largest --smooth-value. sacreBLEU takes any float: 1e308 overflows its precisions to inf
// (BLEU "inf", and a 300-digit value in the signature). Meaningful values are far below this
// bound (floor: 0.1, add-k: 1 by default): with add-k 100 every precision of a sentence is near
// 100%, and a floor above 1 already puts a precision above 100%.
constexpr double kMaxSmoothValue = 100;

// Every line of every reference file; an empty file or a line count different from the
// hypotheses' is an error naming the file and both counts.
std::vector<std::vector<std::string>> read_references(const std::vector<std::string>& paths, size_t num_hypotheses,
                                                      const std::string& hypotheses_name, bool check_encoding) {
  std::vector<std::vector<std::string>> streams;
  for (const std::string& path : paths) {
    streams.push_back(data::read_lines(path, check_encoding));
    if (streams.back().empty()) throw data::DataError(fmt::format("{}: reference file is empty", path));
    if (streams.back().size() != num_hypotheses)
      throw data::DataError(fmt::format("{} has {} lines but {} has {} hypotheses", path, streams.back().size(),
                                        hypotheses_name, num_hypotheses));
  }
  return streams;
}

// One system's hypotheses: stdin, or a file of -i (an empty one is an error naming it).
std::vector<std::string> read_hypotheses(const std::string& path, bool check_encoding) {
  std::vector<std::string> hypotheses = path == kStdin ? data::read_lines(data::standard_input(), path, check_encoding)
                                                       : data::read_lines(path, check_encoding);
  if (hypotheses.empty())
    throw data::DataError(path == kStdin ? std::string("no hypotheses on stdin") : path + ": no hypotheses");
  return hypotheses;
}

std::string input_name(const std::string& path) { return path == kStdin ? "stdin" : path; }

void apply_compound_split(std::vector<std::string>& lines) {
  for (std::string& line : lines) line = data::compound_split(line);
}

void check_option_combination(const ScoreOptions& options) {
  if (options.format != "fairseq")
    for (const CLI::Option* option : options.fairseq_only)
      if (option->count() > 0)
        throw data::DataError(
            fmt::format("{} applies to --format fairseq only (not {})", option->get_name(), options.format));
  if (options.format == "sacrebleu") return;
  for (const CLI::Option* option : options.sacrebleu_only)
    if (option->count() > 0)
      throw data::DataError(fmt::format("{} applies to --format sacrebleu only (not {})", option->get_name(),
                                        options.format));
  if (options.format == "fairseq" && options.references.size() != 1)
    throw data::DataError(fmt::format("--format fairseq scores against one reference, got {}", options.references.size()));
}

// sacreBLEU's rules: one paired test at a time, for two systems or more; no test of sentences;
// --confidence for one system only.
void check_systems(const ScoreOptions& options) {
  if (options.paired_bs && options.paired_ar)
    throw data::DataError("--paired-bs and --paired-ar are two tests of the same question: choose one");
  const bool paired = options.paired_bs || options.paired_ar;
  const char* test = options.paired_bs ? "--paired-bs" : "--paired-ar";
  if (paired && options.inputs.size() < 2)
    throw data::DataError(
        fmt::format("{} compares systems: give the baseline and at least one system with -i", test));
  if (!paired && options.inputs.size() > 1)
    throw data::DataError(
        fmt::format("{} systems given with -i: compare them with --paired-bs or --paired-ar", options.inputs.size()));
  if ((paired || options.confidence) && options.sentence)
    throw data::DataError("--paired-bs, --paired-ar and --confidence test a corpus, not --sentence");
  if (paired && options.confidence)
    throw data::DataError(fmt::format("--confidence is for one system{}",
                                      options.paired_bs ? "; --paired-bs prints every system's interval" : ""));
  if (options.json && (paired || options.sentence))
    throw data::DataError("--json prints one system's corpus score (not --sentence, --paired-bs or --paired-ar)");
  if (options.json && (options.score_only || options.short_signature))
    throw data::DataError("--json writes the score and the whole signature: leave out --score-only and --short");
}

bool scores_metric(const ScoreOptions& options, std::string_view metric) {
  return std::find(options.metrics.begin(), options.metrics.end(), metric) != options.metrics.end();
}

// chrF or TER, named as -m and as printed, with its own options: sacreBLEU's, of one system,
// without resampling (sacreBLEU resamples their statistics in float32, whose arithmetic is not
// reproduced here).
void check_resampling_free_metric(const ScoreOptions& options, std::string_view metric, std::string_view name,
                                  const std::vector<CLI::Option*>& own_options) {
  if (!scores_metric(options, metric)) {
    for (const CLI::Option* option : own_options)
      if (option->count() > 0) throw data::DataError(fmt::format("{} applies to -m {}", option->get_name(), metric));
    return;
  }
  if (options.format != "sacrebleu")
    throw data::DataError(fmt::format("-m {} is sacreBLEU's: use --format sacrebleu (not {})", metric, options.format));
  if (options.paired_bs || options.paired_ar || options.confidence)
    throw data::DataError(
        fmt::format("{} has no --paired-bs, --paired-ar or --confidence here: score BLEU alone for them", name));
}

// -m and each metric's options.
void check_metrics(const ScoreOptions& options) {
  if (options.sentence && options.metrics.size() > 1)
    throw data::DataError("--sentence scores one metric: give -m bleu, -m chrf or -m ter");
  check_resampling_free_metric(options, "chrf", "chrF", options.chrf_only);
  if (scores_metric(options, "chrf")) data::check_chrf_options(options.chrf);
  check_resampling_free_metric(options, "ter", "TER", options.ter_only);
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

// SACREBLEU_SEED as sacreBLEU reads it: unset 12345, `none` (any case) no fixed seed.
std::optional<uint32_t> sacrebleu_seed() {
  const char* value = std::getenv("SACREBLEU_SEED");
  std::string text = value ? value : "12345";
  std::string lower = text;
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "none") return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long seed = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || seed > UINT32_MAX || text.front() == '-')
    throw data::DataError(fmt::format("SACREBLEU_SEED={}: expected an integer in [0, 4294967295] or none", text));
  return uint32_t(seed);
}

// Each system's sacreBLEU statistics, segment by segment.
std::vector<std::vector<data::BleuStats>> segment_stats(const std::vector<std::vector<std::string>>& systems,
                                                        const std::vector<std::vector<std::string>>& references,
                                                        const data::SacreBleuOptions& sacrebleu) {
  std::vector<std::vector<data::BleuStats>> stats;
  for (const std::vector<std::string>& system : systems)
    stats.push_back(data::sacrebleu_segments_stats(system, references, sacrebleu));
  return stats;
}

// A paired test's table: each system's BLEU, with the bootstrap's (μ ± 95% CI), and its p-value
// against the baseline, cells as sacreBLEU writes them ('*' marks p ≤ 0.05), then the signature.
void print_paired_table(const std::vector<std::string>& inputs, const std::vector<data::SystemSignificance>& results,
                        int width, const std::string& signature) {
  std::vector<std::string> names;
  for (size_t s = 0; s < inputs.size(); ++s) names.push_back((s == 0 ? "Baseline: " : "") + inputs[s]);
  size_t name_width = std::string_view("System").size();
  for (const std::string& name : names) name_width = std::max(name_width, name.size());
  fmt::print("{:<{}}  BLEU{}\n", "System", name_width, results.front().confidence ? " (μ ± 95% CI)" : "");
  for (size_t s = 0; s < results.size(); ++s) {
    const data::SystemSignificance& r = results[s];
    std::string cell = fmt::format("{:.{}f}", r.score, width);
    if (r.confidence) cell += fmt::format(" ({:.{}f} ± {:.{}f})", r.confidence->mean, width, r.confidence->ci, width);
    if (r.p_value) cell += fmt::format(" (p = {:.4f}){}", *r.p_value, *r.p_value > 0.05 ? "" : "*");
    fmt::print("{:<{}}  {}\n", names[s], name_width, cell);
  }
  fmt::print("BLEU|{}\n", signature);
}

// --paired-bs or --paired-ar on the -i systems, the first the baseline (docs/mt-tools.md §3.7, §3.8).
void print_paired_test(const ScoreOptions& options, const std::vector<std::vector<std::string>>& systems,
                       const std::vector<std::vector<std::string>>& references) {
  const data::SacreBleuOptions sacrebleu = sacrebleu_options(options);
  const std::vector<std::vector<data::BleuStats>> stats = segment_stats(systems, references, sacrebleu);
  const int num_references = int(references.size());
  if (options.paired_bs) {
    const data::BootstrapOptions bootstrap{.samples = options.paired_bs_samples, .seed = sacrebleu_seed()};
    print_paired_table(options.inputs, data::paired_bootstrap(stats, sacrebleu, bootstrap), options.width,
                       data::sacrebleu_signature(sacrebleu, num_references, options.short_signature,
                                                 data::bootstrap_signature(bootstrap)));
  } else {
    const data::RandomizationOptions randomization{.trials = options.paired_ar_trials, .seed = sacrebleu_seed()};
    print_paired_table(options.inputs, data::paired_approximate_randomization(stats, sacrebleu, randomization),
                       options.width,
                       data::sacrebleu_signature(sacrebleu, num_references, options.short_signature,
                                                 data::randomization_signature(randomization)));
  }
}

// A score in the three forms sacreBLEU prints it.
struct PrintedScore {
  std::string text, score_only, json;
};

// The form asked for: --json, --score-only, or else the text line. The one place that chooses.
const std::string& chosen_form(const ScoreOptions& options, const PrintedScore& score) {
  if (options.json) return score.json;
  if (options.score_only) return score.score_only;
  return score.text;
}

// One sacreBLEU metric of -m: how it scores a corpus and one sentence, each score printed in all
// three forms with the metric's signature.
class Metric {
 public:
  virtual ~Metric() = default;
  virtual PrintedScore corpus(const std::vector<std::string>& hypotheses,
                              const std::vector<std::vector<std::string>>& references) const = 0;
  virtual PrintedScore sentence(const std::string& hypothesis, const std::vector<std::string>& references) const = 0;
};

// BLEU, corpus-level with --confidence's interval when asked, sentence-level with the effective order.
class BleuMetric : public Metric {
 public:
  BleuMetric(const ScoreOptions& options, int num_references)
      : options_(options), sacrebleu_(sacrebleu_options(options)), num_references_(num_references),
        signature_(data::sacrebleu_signature(sacrebleu_, num_references, options.short_signature)) {}

  PrintedScore corpus(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references) const override {
    const std::vector<data::BleuStats> segments = data::sacrebleu_segments_stats(hypotheses, references, sacrebleu_);
    const data::BleuScore score = data::sacrebleu_compute(data::sum_stats(segments, sacrebleu_.max_order), sacrebleu_);
    // sacreBLEU resamples only for more than one resample: --confidence-n 1 prints the plain line.
    if (!options_.confidence || options_.confidence_samples <= 1) return printed(score, signature_, std::nullopt);
    const data::BootstrapOptions bootstrap{.samples = options_.confidence_samples, .seed = sacrebleu_seed()};
    return printed(score,
                   data::sacrebleu_signature(sacrebleu_, num_references_, options_.short_signature,
                                             data::bootstrap_signature(bootstrap)),
                   data::bootstrap_confidence(segments, sacrebleu_, bootstrap));
  }

  PrintedScore sentence(const std::string& hypothesis, const std::vector<std::string>& references) const override {
    return printed(data::sacrebleu_sentence_score(hypothesis, references, sacrebleu_), signature_, std::nullopt);
  }

 private:
  PrintedScore printed(const data::BleuScore& score, const std::string& signature,
                       const std::optional<data::BleuConfidence>& confidence) const {
    return {data::format_sacrebleu_score(score, signature, options_.width, confidence),
            data::format_sacrebleu_score_only(score, options_.width, confidence),
            data::format_sacrebleu_json(score, signature, options_.width, confidence)};
  }

  const ScoreOptions& options_;
  data::SacreBleuOptions sacrebleu_;
  int num_references_;
  std::string signature_;
};

// chrF and chrF++ (--chrf-*).
class ChrfMetric : public Metric {
 public:
  ChrfMetric(const ScoreOptions& options, int num_references)
      : options_(options), signature_(data::chrf_signature(options.chrf, num_references, options.short_signature)) {}

  PrintedScore corpus(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references) const override {
    return printed(data::chrf_corpus_score(hypotheses, references, options_.chrf));
  }

  PrintedScore sentence(const std::string& hypothesis, const std::vector<std::string>& references) const override {
    return printed(data::chrf_compute(data::chrf_segment_stats(hypothesis, references, options_.chrf), options_.chrf));
  }

 private:
  PrintedScore printed(double score) const {
    return {data::format_chrf_score(options_.chrf, score, signature_, options_.width),
            data::format_chrf_score_only(score, options_.width),
            data::format_chrf_json(options_.chrf, score, signature_, options_.width)};
  }

  const ScoreOptions& options_;
  std::string signature_;
};

// TER (--ter-*).
class TerMetric : public Metric {
 public:
  TerMetric(const ScoreOptions& options, int num_references)
      : options_(options), signature_(data::ter_signature(options.ter, num_references, options.short_signature)) {}

  PrintedScore corpus(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references) const override {
    return printed(data::ter_corpus_score(hypotheses, references, options_.ter));
  }

  PrintedScore sentence(const std::string& hypothesis, const std::vector<std::string>& references) const override {
    return printed(data::ter_compute(data::ter_segment_stats(hypothesis, references, options_.ter)));
  }

 private:
  PrintedScore printed(double score) const {
    return {data::format_ter_score(score, signature_, options_.width),
            data::format_ter_score_only(score, options_.width),
            data::format_ter_json(score, signature_, options_.width)};
  }

  const ScoreOptions& options_;
  std::string signature_;
};

// The metrics of -m in sacreBLEU's order: it sorts their names (BLEU, CHRF, TER).
std::vector<std::unique_ptr<Metric>> selected_metrics(const ScoreOptions& options, int num_references) {
  std::vector<std::unique_ptr<Metric>> metrics;
  if (scores_metric(options, "bleu")) metrics.push_back(std::make_unique<BleuMetric>(options, num_references));
  if (scores_metric(options, "chrf")) metrics.push_back(std::make_unique<ChrfMetric>(options, num_references));
  if (scores_metric(options, "ter")) metrics.push_back(std::make_unique<TerMetric>(options, num_references));
  return metrics;
}

// Each metric's corpus result in sacreBLEU's order. Several are printed as sacreBLEU prints them:
// a JSON list, or text lines right-aligned on their ` = ` (score-only lines as they are).
void print_corpus_scores(const ScoreOptions& options, const std::vector<std::string>& hypotheses,
                         const std::vector<std::vector<std::string>>& references) {
  std::vector<std::string> results;
  for (const auto& metric : selected_metrics(options, int(references.size())))
    results.push_back(chosen_form(options, metric->corpus(hypotheses, references)));
  if (results.size() == 1) {
    fmt::print("{}\n", results.front());
  } else if (options.json) {
    std::string list = "[\n";
    for (size_t m = 0; m < results.size(); ++m) list += (m > 0 ? ",\n" : "") + results[m];
    fmt::print("{}\n]\n", list);
  } else if (options.score_only) {
    for (const std::string& result : results) fmt::print("{}\n", result);
  } else {
    // The name and signature are ASCII: bytes count as sacreBLEU's characters.
    size_t name_width = 0;
    for (const std::string& result : results) name_width = std::max(name_width, result.find('=') - 1);
    for (const std::string& result : results)
      fmt::print("{}{}\n", std::string(name_width - (result.find('=') - 1), ' '), result);
  }
}

// One line per hypothesis, of the one metric (sentence BLEU with the effective order, as
// sacreBLEU's --sentence-level).
void print_sentence_scores(const ScoreOptions& options, const std::vector<std::string>& hypotheses,
                           const std::vector<std::vector<std::string>>& references) {
  const std::unique_ptr<Metric> metric = std::move(selected_metrics(options, int(references.size())).front());
  std::vector<std::string> segment_references(references.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    for (size_t r = 0; r < references.size(); ++r) segment_references[r] = references[r][i];
    fmt::print("{}\n", chosen_form(options, metric->sentence(hypotheses[i], segment_references)));
  }
}

// fairseq-score's line, or with --sentence-bleu one "N BLEU4 = ..." line per hypothesis (N from
// 0), its 2- to 4-gram counts started at 1 as fairseq means it: its own --sentence-bleu stops with
// a TypeError today (it builds the Scorer with the arguments of an older version).
void print_fairseq_scores(const ScoreOptions& options, const std::vector<std::string>& hypotheses,
                          const std::vector<std::string>& references) {
  if (!options.sentence_bleu) {
    fmt::print("{}\n", data::format_fairseq_score(data::fairseq_compute(
                           data::fairseq_stats(hypotheses, references, options.lowercase), options.fairseq_order)));
    return;
  }
  const std::vector<data::BleuStats> sentences =
      data::fairseq_sentence_stats(hypotheses, references, options.lowercase);
  for (size_t i = 0; i < sentences.size(); ++i)
    fmt::print("{} {}\n", i,
               data::format_fairseq_score(
                   data::fairseq_compute(data::fairseq_one_initialized(sentences[i]), options.fairseq_order)));
}

int run_score(ScoreOptions options) {
  check_option_combination(options);
  check_metrics(options);
  check_systems(options);
  if (options.inputs.empty()) options.inputs = {kStdin};
  const bool bytes_only = options.format == "multi-bleu";  // multi-bleu.perl reads bytes
  std::vector<std::vector<std::string>> systems;
  for (const std::string& input : options.inputs) {
    systems.push_back(read_hypotheses(input, !bytes_only));
    if (systems.back().size() != systems.front().size())
      throw data::DataError(fmt::format("{} has {} hypotheses but {} has {}", input, systems.back().size(),
                                        options.inputs.front(), systems.front().size()));
  }
  std::vector<std::vector<std::string>> references =
      read_references(options.references, systems.front().size(), input_name(options.inputs.front()), !bytes_only);
  if (options.compound_split) {
    for (auto& system : systems) apply_compound_split(system);
    for (auto& stream : references) apply_compound_split(stream);
  }
  if (options.paired_bs || options.paired_ar) {
    print_paired_test(options, systems, references);
    return 0;
  }
  const std::vector<std::string>& hypotheses = systems.front();

  if (options.format == "multi-bleu") {
    fmt::print("{}\n", data::format_multibleu_score(
                           data::multibleu_compute(data::multibleu_stats(hypotheses, references, options.lowercase))));
  } else if (options.format == "fairseq") {
    print_fairseq_scores(options, hypotheses, references.front());
  } else if (options.sentence) {
    print_sentence_scores(options, hypotheses, references);
  } else {
    print_corpus_scores(options, hypotheses, references);
  }
  return 0;
}

CommandRegistration score_command(
    "score",
    "BLEU, chrF or TER of stdin or -i files against references (sacreBLEU and its paired tests, multi-bleu.perl, "
    "fairseq-score)",
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
      options->fairseq_only = {
          cmd.add_option("-o,--order", options->fairseq_order, "fairseq-score: BLEU over n-grams up to this order")
              ->check(number_in_range(1, 4))
              ->capture_default_str(),
          cmd.add_flag("--sentence-bleu", options->sentence_bleu,
                       "fairseq-score: one BLEU line per hypothesis, its 2- to 4-gram counts started at 1")};
      options->smooth_value_option =
          cmd.add_option("--smooth-value", options->smooth_value, "Value for floor (default 0.1) or add-k (default 1)")
              ->check(number_in_range(0, kMaxSmoothValue));
      options->sacrebleu_only = {
          cmd.add_option("-t,--tokenize", options->tokenize, "sacreBLEU tokenizer")
              ->check(CLI::IsMember(data::bleu_tokenizer_names()))
              ->capture_default_str(),
          cmd.add_option("-s,--smooth", options->smooth, "Smoothing method")
              ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}))
              ->capture_default_str(),
          options->smooth_value_option,
          cmd.add_flag("--sentence", options->sentence, "One sentence-BLEU line per hypothesis (effective order)"),
          cmd.add_option("-w,--width", options->width, "Decimals of the score (sacreBLEU's command line prints 1)")
              ->check(number_in_range(0, 16))
              ->capture_default_str(),
          cmd.add_flag("--paired-bs", options->paired_bs,
                       "Paired bootstrap test of each -i system against the first (sacreBLEU's; seed: SACREBLEU_SEED)"),
          cmd.add_option("--paired-bs-n", options->paired_bs_samples, "Resamples of --paired-bs")
              ->check(positive_number())
              ->capture_default_str(),
          cmd.add_flag("--paired-ar", options->paired_ar,
                       "Paired approximate randomization test of each -i system against the first (sacreBLEU's)"),
          cmd.add_option("--paired-ar-n", options->paired_ar_trials, "Trials of --paired-ar")
              ->check(positive_number())
              ->capture_default_str(),
          cmd.add_flag("--confidence", options->confidence,
                       "Mean and 95% interval of the BLEU over resamples of the sentences (sacreBLEU's)"),
          cmd.add_option("--confidence-n", options->confidence_samples, "Resamples of --confidence")
              ->check(positive_number())
              ->capture_default_str(),
          cmd.add_flag("--json", options->json, "One system's corpus score as sacreBLEU's JSON (its -f json)"),
          cmd.add_flag("-b,--score-only", options->score_only, "Print the score alone (sacreBLEU's -b)"),
          cmd.add_flag("--short", options->short_signature, "The short signature (sacreBLEU's --short)"),
      };
      cmd.add_option("-m,--metrics", options->metrics, "bleu, chrf and/or ter (sacreBLEU's -m)")
          ->check(CLI::IsMember({"bleu", "chrf", "ter"}))
          ->capture_default_str();
      options->chrf_only = {
          cmd.add_option("--chrf-char-order", options->chrf.char_order, "chrF character n-gram order")
              ->capture_default_str(),
          cmd.add_option("--chrf-word-order", options->chrf.word_order, "chrF word n-gram order (2: chrF++)")
              ->capture_default_str(),
          cmd.add_option("--chrf-beta", options->chrf.beta, "chrF: weight of recall against precision")
              ->capture_default_str(),
          cmd.add_flag("--chrf-whitespace", options->chrf.whitespace, "chrF: keep whitespace in character n-grams"),
          cmd.add_flag("--chrf-lowercase", options->chrf.lowercase, "chrF: case-insensitive (Unicode lower-casing)"),
          cmd.add_flag("--chrf-eps-smoothing", options->chrf.eps_smoothing,
                       "chrF: average per-order F-scores with epsilon smoothing instead of the effective order"),
      };
      options->ter_only = {
          cmd.add_flag("--ter-case-sensitive", options->ter.case_sensitive, "TER: do not lower-case"),
          cmd.add_flag("--ter-normalized", options->ter.normalized,
                       "TER: Tercom's normalization (entities, punctuation and number tokenization)"),
          cmd.add_flag("--ter-no-punct", options->ter.no_punct, "TER: remove punctuation"),
          cmd.add_flag("--ter-asian-support", options->ter.asian_support,
                       "TER: with --ter-normalized split CJK characters, with --ter-no-punct remove CJK punctuation"),
      };
      cmd.add_option("-i,--input", options->inputs,
                     "Hypothesis files instead of stdin (several with --paired-bs or --paired-ar)")
          ->check(CLI::ExistingFile);
      return [options] { return run_score(*options); };
    });

}  // namespace
}  // namespace attn::app
