// Tests of data/bleu against what sacreBLEU 2.6.0, multi-bleu.perl, fairseq-score and NLTK
// printed on the vectors of docs/mt-tools.md §3: n-gram counts exactly, scores to 1e-9
// relative, formatted lines byte for byte.
#include <catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/bleu.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using namespace attn::data;
using nlohmann::json;

namespace {

using attn::test::vector_path;

const std::string kBleuVectors = vector_path("own/bleu/");

json load_json(const std::string& path) { return json::parse(attn::test::read_file(path)); }

json load_unit_tests() { return load_json(vector_path("upstream/sacrebleu-unit-tests/sacrebleu_unit_tests.json")); }

// |actual − expected| ≤ 1e-9 · max(1, |expected|)
void check_close(double actual, double expected) {
  INFO("actual " << actual << " expected " << expected);
  CHECK(std::abs(actual - expected) <= 1e-9 * std::max(1.0, std::abs(expected)));
}

void check_counts(const std::vector<double>& actual, const json& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t n = 0; n < actual.size(); ++n) CHECK(actual[n] == expected[n].get<double>());
}

// n-gram matches and totals, hypothesis and reference lengths exactly as sacreBLEU printed
// them (its JSON keys "counts", "totals", "sys_len", "ref_len").
void check_statistics(const BleuScore& score, const json& expected) {
  check_counts(score.counts, expected["counts"]);
  check_counts(score.totals, expected["totals"]);
  CHECK(score.sys_len == expected["sys_len"].get<int64_t>());
  CHECK(score.ref_len == expected["ref_len"].get<int64_t>());
}

std::vector<std::vector<std::string>> reference_streams(const json& refs) {
  return refs.get<std::vector<std::vector<std::string>>>();
}

// sacreBLEU keyword arguments (tokenize, lowercase, smooth_method, smooth_value,
// effective_order / use_effective_order, max_ngram_order) as options.
SacreBleuOptions options_from_kwargs(const json& kwargs, SacreBleuOptions options = {}) {
  if (kwargs.contains("tokenize")) options.tokenizer = parse_bleu_tokenizer(kwargs["tokenize"].get<std::string>());
  if (kwargs.contains("lowercase")) options.lowercase = kwargs["lowercase"];
  if (kwargs.contains("smooth_method")) options.smoothing = parse_bleu_smoothing(kwargs["smooth_method"].get<std::string>());
  if (kwargs.contains("smooth_value") && !kwargs["smooth_value"].is_null()) options.smooth_value = kwargs["smooth_value"];
  if (kwargs.contains("effective_order")) options.effective_order = kwargs["effective_order"];
  if (kwargs.contains("max_ngram_order")) options.max_order = kwargs["max_ngram_order"];
  return options;
}

// sacreBLEU's raw_corpus_bleu(): no tokenization, floor smoothing 0.01, effective order.
SacreBleuOptions raw_corpus_bleu_options() {
  SacreBleuOptions options;
  options.tokenizer = BleuTokenizer::kNone;
  options.smoothing = BleuSmoothing::kFloor;
  options.smooth_value = 0.01;
  options.effective_order = true;
  return options;
}

std::vector<std::string> slice(const std::vector<std::string>& lines, size_t first, size_t last) {
  return std::vector<std::string>(lines.begin() + std::ptrdiff_t(first - 1), lines.begin() + std::ptrdiff_t(last));
}

// Words of a command line such as `multi-bleu.perl -lc ref.tok ref2.tok < hyp.tok`.
std::vector<std::string> words(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// Runs `multi-bleu.perl [-lc] REF... < HYP` from the bleu/ vector folder through the library.
BleuScore run_multibleu_command(const std::string& command) {
  std::vector<std::string> args = words(command);
  REQUIRE(args.size() >= 4);
  REQUIRE(args[args.size() - 2] == "<");
  bool lowercase = args[1] == "-lc";
  std::vector<std::vector<std::string>> references;
  for (size_t i = lowercase ? 2 : 1; i + 2 < args.size(); ++i) references.push_back(read_lines(kBleuVectors + args[i]));
  std::vector<std::string> hypotheses = read_lines(kBleuVectors + args.back());
  return multibleu_compute(multibleu_stats(hypotheses, references, lowercase));
}

}  // namespace

TEST_CASE("sacreBLEU corpus BLEU: 14 configurations on 318 segments", "[bleu][sacrebleu]") {
  json expected = load_json(kBleuVectors + "sacrebleu_corpus_expected.json");
  std::vector<std::string> hypotheses = read_lines(kBleuVectors + "hyp.txt");
  REQUIRE(hypotheses.size() == 318);
  REQUIRE(expected["corpus"].size() == 14);
  for (const auto& [name, config] : expected["corpus"].items()) {
    INFO("configuration " << name);
    SacreBleuOptions options = options_from_kwargs(config.value("kwargs", json::object()));
    std::vector<std::vector<std::string>> references;
    for (const std::string file : config.value("refs", json::array({"ref.txt"})))
      references.push_back(read_lines(kBleuVectors + file));
    std::vector<std::string> hyps = hypotheses;
    if (config.contains("lines")) {
      bool specials = config["lines"] == "specials_only_lines_1_18";
      size_t first = specials ? 1 : 19, last = specials ? 18 : 318;
      hyps = slice(hyps, first, last);
      for (auto& stream : references) stream = slice(stream, first, last);
    }
    BleuScore score = sacrebleu_corpus_score(hyps, references, options);
    check_statistics(score, config);
    check_close(score.score, config["score"]);
    check_close(score.bp, config["bp"]);
    for (size_t n = 0; n < score.precisions.size(); ++n) check_close(score.precisions[n], config["precisions"][n]);
    std::string signature = sacrebleu_signature(options, int(references.size()));
    CHECK(signature == config["signature"].get<std::string>());
    CHECK(sacrebleu_signature(options, int(references.size()), true) == config["signature_short"].get<std::string>());
    CHECK(format_sacrebleu_score(score, signature) == config["formatted"].get<std::string>());
    CHECK(format_sacrebleu_score(score, signature, 1) == config["formatted_w1"].get<std::string>());
  }
}

TEST_CASE("sacreBLEU's JSON writes the rounded score as Python writes a float", "[bleu][sacrebleu]") {
  BleuScore score;
  score.score = 99.96;
  score.precisions = {100, 100, 100, 100};
  score.bp = 1;
  score.ratio = 1;
  // float(f"{99.96:.0f}") is 100.0, and json.dumps writes it so, not as the integer 100.
  CHECK(format_sacrebleu_json(score, "nrefs:1|version:2.6.0", 0).starts_with(
      "{\n \"name\": \"BLEU\",\n \"score\": 100.0,\n \"signature\": \"nrefs:1|version:2.6.0\",\n"));
  score.score = 0.00001;
  CHECK(format_sacrebleu_json(score, "nrefs:1", 5).find("\"score\": 1e-05,") != std::string::npos);
  CHECK(format_sacrebleu_score_only(score, 5) == "0.00001");
}

TEST_CASE("sacreBLEU sentence BLEU: 318 segments × 6 configurations", "[bleu][sacrebleu]") {
  std::vector<std::string> records = read_lines(kBleuVectors + "sacrebleu_sentence_expected.jsonl");
  REQUIRE(records.size() == 318);
  struct Config {
    const char* name;
    BleuSmoothing smoothing;
    bool effective_order, two_references;
  };
  const Config configs[] = {
      {"exp_eff", BleuSmoothing::kExp, true, false},     {"exp_noeff", BleuSmoothing::kExp, false, false},
      {"floor_eff", BleuSmoothing::kFloor, true, false}, {"addk_eff", BleuSmoothing::kAddK, true, false},
      {"none_eff", BleuSmoothing::kNone, true, false},   {"exp_eff_2refs", BleuSmoothing::kExp, true, true},
  };
  for (const std::string& record : records) {
    json line = json::parse(record);
    for (const Config& config : configs) {
      INFO("line " << line["line"].get<int>() << " " << config.name);
      SacreBleuOptions options;
      options.smoothing = config.smoothing;
      options.effective_order = config.effective_order;
      std::vector<std::string> references{line["ref"].get<std::string>()};
      if (config.two_references) references.push_back(line["ref2"].get<std::string>());
      BleuScore score = sacrebleu_sentence_score(line["hyp"].get<std::string>(), references, options);
      const json& expected = line[config.name];
      check_statistics(score, expected);
      check_close(score.bp, expected["bp"]);
      check_close(score.score, expected["score"]);
    }
  }
}

TEST_CASE("sacreBLEU upstream unit tests: corpus_bleu with keyword arguments", "[bleu][sacrebleu][upstream]") {
  json groups = load_unit_tests()["test_bleu.py"];
  for (const json& test : groups["corpus_bleu (compat API, defaults: 13a, exp) with kwargs; expected = score"]) {
    INFO("kwargs " << test["kwargs"].dump());
    BleuScore score = sacrebleu_corpus_score(test["hyps"], reference_streams(test["refs"]), options_from_kwargs(test["kwargs"]));
    check_statistics(score, test);
    check_close(score.score, test["actual_2.6.0"]);
    CHECK(std::abs(score.score - test["expected"].get<double>()) < 1e-6);
  }
}

TEST_CASE("sacreBLEU upstream unit tests: raw_corpus_bleu, effective order, statistics", "[bleu][sacrebleu][upstream]") {
  json groups = load_unit_tests()["test_bleu.py"];
  for (const char* group : {"raw_corpus_bleu (tokenize=none, smooth=floor value 0.01, use_effective_order=True, force=True); "
                            "expected = score/100",
                            "effective_order via raw_corpus_bleu(floor 0.01); expected = score/100"})
    for (const json& test : groups[group]) {
      INFO(group << ": " << test["hyps"].dump());
      BleuScore score = sacrebleu_corpus_score(test["hyps"], reference_streams(test["refs"]), raw_corpus_bleu_options());
      check_close(score.score / 100, test["expected"]);
    }
  for (const json& test : groups["statistics via raw_corpus_bleu: counts (common) and totals"]) {
    BleuScore score = sacrebleu_corpus_score(test["hyps"], reference_streams(test["refs"]), raw_corpus_bleu_options());
    check_counts(score.counts, test["counts"]);
    check_counts(score.totals, test["totals"]);
  }
  for (const json& test : groups["offset: raw_corpus_bleu with smooth_value 0.0 -> expected_without_offset; with "
                                 "None/default (0.1 floor) -> expected_with_offset; /100"]) {
    SacreBleuOptions options = raw_corpus_bleu_options();
    options.smooth_value = 0.0;
    check_close(sacrebleu_corpus_score(test["hyps"], reference_streams(test["refs"]), options).score / 100,
                test["expected_without_offset"]);
    options.smooth_value.reset();
    check_close(sacrebleu_corpus_score(test["hyps"], reference_streams(test["refs"]), options).score / 100,
                test["expected_with_offset"]);
  }
}

TEST_CASE("sacreBLEU upstream unit tests: compute_bleu on given statistics", "[bleu][sacrebleu][upstream]") {
  json groups = load_unit_tests()["test_bleu.py"];
  auto stats_of = [](const json& test) {
    BleuStats stats;
    stats.correct = test["correct"].get<std::vector<int64_t>>();
    stats.total = test["total"].get<std::vector<int64_t>>();
    stats.sys_len = test["sys_len"];
    stats.ref_len = test["ref_len"];
    return stats;
  };
  for (const json& test : groups["compute_bleu(correct, total, sys_len, ref_len) default smooth none; expected = score/100"]) {
    SacreBleuOptions options;
    options.smoothing = BleuSmoothing::kNone;
    CHECK(std::abs(sacrebleu_compute(stats_of(test), options).score / 100 - test["expected"].get<double>()) < 1e-10);
  }
  for (const json& test : groups["degenerate stats: compute_bleu(..., smooth_method=floor, smooth_value=offset) == "
                                 "expected exactly (/100)"]) {
    SacreBleuOptions options;
    options.smoothing = BleuSmoothing::kFloor;
    options.smooth_value = test["floor_value"].get<double>();
    CHECK(sacrebleu_compute(stats_of(test), options).score / 100 == test["expected"].get<double>());
  }
}

TEST_CASE("sacreBLEU upstream unit tests: max n-gram order 1..6", "[bleu][sacrebleu][upstream]") {
  json groups = load_unit_tests()["test_bleu.py"];
  for (const json& test : groups["max_ngram_order: BLEU(max_ngram_order=N).corpus_score(hyps, refs) formatted %.2f"]) {
    SacreBleuOptions options;
    options.max_order = test["order"];
    INFO("order " << options.max_order);
    BleuScore score = sacrebleu_corpus_score(test["hyps"], reference_streams(test["refs"]), options);
    check_close(score.score, test["actual_2.6.0"]);
    CHECK(format_sacrebleu_score(score, "").substr(0, 7 + test["expected"].get<std::string>().size()) ==
          "BLEU = " + test["expected"].get<std::string>());
  }
}

TEST_CASE("sacreBLEU upstream unit tests: sentence_bleu with smoothing, tokenizers, case", "[bleu][sacrebleu][upstream]") {
  json groups = load_unit_tests()["test_sentence_bleu.py"];
  for (const auto& [name, group] : groups.items()) {
    for (const json& test : group["cases"]) {
      INFO(name << ": " << test.dump());
      SacreBleuOptions options = options_from_kwargs(test);
      options.effective_order = true;
      BleuScore score = sacrebleu_sentence_score(group["SYS"].get<std::string>(), {group["REF"].get<std::string>()}, options);
      CHECK(std::abs(score.score - test["expected"].get<double>()) < 1e-3);
      if (test.contains("actual_2.6.0")) check_close(score.score, test["actual_2.6.0"]);
    }
  }
}

TEST_CASE("sacreBLEU 13a equals mteval-v13a.pl on the 16 WMT17 en-de systems", "[bleu][sacrebleu][upstream]") {
  json scores = load_unit_tests()["test.sh"]["MTEVAL (mteval-v13a.pl scores, sacreBLEU default 13a must match to 2 decimals)"];
  const std::string raw = vector_path("upstream/wmt17-en-de/raw/");
  std::vector<std::vector<std::string>> references{read_lines(raw + "newstest2017.ref.de")};
  int systems = 0;
  for (const auto& [sgm, expected] : scores.items()) {
    if (sgm.find(".en-de.sgm") == std::string::npos) continue;
    std::string system = sgm.substr(0, sgm.size() - 4);
    INFO(system);
    BleuScore score = sacrebleu_corpus_score(read_lines(raw + system), references, SacreBleuOptions{});
    char mteval[16];
    std::snprintf(mteval, sizeof mteval, "%.2f", std::stod(expected.get<std::string>()));
    CHECK(format_sacrebleu_score(score, "").substr(7, 5) == mteval);
    ++systems;
  }
  CHECK(systems == 16);
}

TEST_CASE("sacreBLEU upstream unit tests: a \\r inside a reference is whitespace", "[bleu][sacrebleu][upstream]") {
  json test = load_unit_tests()["test.sh"]["control character test"];
  std::vector<std::string> hypotheses{test["hyp"].get<std::string>()};
  SacreBleuOptions options;
  BleuScore buggy = sacrebleu_corpus_score(hypotheses, {{test["ref_buggy_bytes"].get<std::string>()}}, options);
  BleuScore okay = sacrebleu_corpus_score(hypotheses, {{test["ref_okay"].get<std::string>()}}, options);
  CHECK(format_sacrebleu_score(buggy, "") == format_sacrebleu_score(okay, ""));
  check_close(buggy.score, 100.0);
}

TEST_CASE("multi-bleu.perl: 10 runs, exact counts and printed lines", "[bleu][multibleu]") {
  json runs = load_json(kBleuVectors + "multibleu_stats.json");
  REQUIRE(runs.size() == 10);
  for (const auto& [name, run] : runs.items()) {
    INFO(name << ": " << run["command"].get<std::string>());
    BleuScore score = run_multibleu_command(run["command"]);
    check_counts(score.counts, run["correct"]);
    check_counts(score.totals, run["total"]);
    CHECK(score.sys_len == run["hyp_len"].get<int64_t>());
    CHECK(score.ref_len == run["ref_len"].get<int64_t>());
    check_close(score.bp, run["bp"]);
    check_close(score.score, run["bleu"]);
    CHECK(format_multibleu_score(score) == run["expected_stdout"].get<std::string>());
  }
}

TEST_CASE("multi-bleu.perl: the expected stdout table", "[bleu][multibleu]") {
  std::vector<std::string> rows = read_lines(kBleuVectors + "multibleu_expected.tsv");
  REQUIRE(rows.size() == 11);
  for (size_t i = 1; i < rows.size(); ++i) {
    size_t tab1 = rows[i].find('\t'), tab2 = rows[i].find('\t', tab1 + 1);
    INFO(rows[i]);
    CHECK(format_multibleu_score(run_multibleu_command(rows[i].substr(tab1 + 1, tab2 - tab1 - 1))) == rows[i].substr(tab2 + 1));
  }
}

// Expected lines: multi-bleu.perl (moses 3445289) on these inputs.
TEST_CASE("multi-bleu.perl: references more than 9999 tokens away count 9999", "[bleu][multibleu]") {
  const auto repeat = [](const std::string& word, size_t count) {
    std::string line = word;
    for (size_t i = 1; i < count; ++i) line += " " + word;
    return line;
  };
  const auto line_of = [](const std::vector<std::string>& hypotheses,
                          const std::vector<std::vector<std::string>>& references) {
    return format_multibleu_score(multibleu_compute(multibleu_stats(hypotheses, references, false)));
  };
  // Distance 9999 still takes the reference, 10009 gives the length 9999.
  CHECK(line_of({repeat("a", 10000)}, {{"a"}}) ==
        "BLEU = 0.00, 0.0/0.0/0.0/0.0 (BP=1.000, ratio=10000.000, hyp_len=10000, ref_len=1)");
  CHECK(line_of({repeat("a", 10010), "b c"}, {{"a", "b c"}}) ==
        "BLEU = 0.00, 0.0/0.0/0.0/0.0 (BP=1.000, ratio=1.001, hyp_len=10012, ref_len=10001)");
  CHECK(line_of({"", "b c"}, {{repeat("a", 10005), "b c"}}) ==
        "BLEU = 0.00, 100.0/100.0/0.0/0.0 (BP=0.000, ratio=0.000, hyp_len=2, ref_len=10001)");
  // A nearer second reference is taken as usual.
  CHECK(line_of({repeat("a", 10010)}, {{"a"}, {repeat("a", 20)}}) ==
        "BLEU = 0.18, 0.2/0.2/0.2/0.2 (BP=1.000, ratio=500.500, hyp_len=10010, ref_len=20)");
}

TEST_CASE("fairseq-score: 9 runs, printed lines (empty lines count one token; -o N)", "[bleu][fairseq]") {
  std::vector<std::string> rows = read_lines(kBleuVectors + "fairseq_score_expected.tsv");
  REQUIRE(rows.size() == 10);
  for (size_t i = 1; i < rows.size(); ++i) {
    size_t tab1 = rows[i].find('\t'), tab2 = rows[i].find('\t', tab1 + 1);
    std::vector<std::string> args = words(rows[i].substr(tab1 + 1, tab2 - tab1 - 1));
    REQUIRE(args.size() >= 5);
    bool ignore_case = args.size() == 6 && args[5] == "--ignore-case";
    const int order = args.size() == 7 && args[5] == "-o" ? std::stoi(args[6]) : 4;
    INFO(rows[i]);
    BleuStats stats = fairseq_stats(read_lines(kBleuVectors + args[2]), read_lines(kBleuVectors + args[4]), ignore_case);
    CHECK(format_fairseq_score(fairseq_compute(stats, order)) == rows[i].substr(tab2 + 1));
  }
}

// fairseq_sentence_bleu_expected.txt: fairseq's --sentence-bleu code with its Scorer built as it
// means to (fairseq_sentence_bleu.py): each line's 2- to 4-gram counts started at 1.
TEST_CASE("fairseq-score --sentence-bleu: 318 lines as fairseq computes them", "[bleu][fairseq]") {
  const std::vector<std::string> expected = read_lines(kBleuVectors + "fairseq_sentence_bleu_expected.txt");
  const std::vector<BleuStats> sentences =
      fairseq_sentence_stats(read_lines(kBleuVectors + "hyp.tok"), read_lines(kBleuVectors + "ref.tok"), false);
  REQUIRE(sentences.size() == expected.size());
  for (size_t i = 0; i < sentences.size(); ++i)
    CHECK(std::to_string(i) + " " + format_fairseq_score(fairseq_compute(fairseq_one_initialized(sentences[i]))) ==
          expected[i]);
}

TEST_CASE("fairseq-score special symbols: </s> padding, <pad> trimming, reference <unk>", "[bleu][fairseq]") {
  // Empty hypothesis and reference: one matching `</s>` each.
  BleuStats empty = fairseq_stats({""}, {""}, false);
  CHECK(empty.sys_len == 1);
  CHECK(empty.correct == std::vector<int64_t>{1, 0, 0, 0});
  // Leading <pad> and trailing </s> are trimmed; a reference <unk> never matches.
  BleuStats trimmed = fairseq_stats({"<pad> a <unk> b </s>"}, {"a <unk> b"}, false);
  CHECK(trimmed.sys_len == 3);
  CHECK(trimmed.ref_len == 3);
  CHECK(trimmed.correct == std::vector<int64_t>{2, 0, 0, 0});
  // --ignore-case lower-cases before the symbols are looked up.
  CHECK(fairseq_stats({"A <UNK>"}, {"a <UNK>"}, true).correct == std::vector<int64_t>{1, 0, 0, 0});
}

TEST_CASE("NLTK cross-check: sacreBLEU(none) and NLTK's max(1, ·) denominators", "[bleu][nltk]") {
  json cases = load_json(kBleuVectors + "nltk_crosscheck.json")["cases"];
  std::vector<std::string> hyps = read_lines(kBleuVectors + "hyp.txt");
  std::vector<std::string> ref1 = read_lines(kBleuVectors + "ref.txt"), ref2 = read_lines(kBleuVectors + "ref2.txt");
  for (const auto& [name, test] : cases.items()) {
    INFO(name);
    std::vector<size_t> lines;
    if (test["lines_used_1based"].is_string())
      for (size_t i = 1; i <= hyps.size(); ++i) lines.push_back(i);
    else
      lines = test["lines_used_1based"].get<std::vector<size_t>>();
    bool two_references = name.find("2refs") != std::string::npos;
    SacreBleuOptions options;
    options.smoothing = BleuSmoothing::kNone;
    BleuStats sacrebleu(4), nltk(4);
    for (size_t line : lines) {
      std::vector<std::string> references{ref1[line - 1]};
      if (two_references) references.push_back(ref2[line - 1]);
      BleuStats segment = sacrebleu_segment_stats(hyps[line - 1], references, options);
      sacrebleu += segment;
      for (size_t n = 0; n < 4; ++n) segment.total[n] = std::max<int64_t>(1, segment.total[n]);
      nltk += segment;
    }
    check_close(sacrebleu_compute(sacrebleu, options).score, test["sacrebleu_13a_smooth_none"]);
    double log_sum = 0;
    for (size_t n = 0; n < 4; ++n) log_sum += 0.25 * std::log(double(nltk.correct[n]) / double(nltk.total[n]));
    double bp = nltk.sys_len < nltk.ref_len ? std::exp(1.0 - double(nltk.ref_len) / double(nltk.sys_len)) : 1.0;
    check_close(100 * bp * std::exp(log_sum), test["nltk_corpus_bleu_x100"]);
  }
}

TEST_CASE("BLEU errors: mismatched streams, empty sides, unknown names", "[bleu][errors]") {
  std::vector<std::string> two{"a b", "c d"}, one{"a b"};
  CHECK_THROWS_WITH(sacrebleu_corpus_score(two, {two, one}, SacreBleuOptions{}),
                    Catch::Contains("reference stream 2 has 1 lines but there are 2 hypotheses"));
  CHECK_THROWS_AS(sacrebleu_corpus_score(two, {}, SacreBleuOptions{}), DataError);
  CHECK_THROWS_AS(multibleu_stats(two, {one}, false), DataError);
  CHECK_THROWS_WITH(fairseq_stats(two, one, false), Catch::Contains("1 reference lines but 2 hypotheses"));
  CHECK_THROWS_WITH(multibleu_compute(multibleu_stats({""}, {{"a"}}, false)), Catch::Contains("hypotheses are empty"));
  CHECK_THROWS_WITH(multibleu_compute(multibleu_stats({"a"}, {{""}}, false)), Catch::Contains("reference length is 0"));
  CHECK_THROWS_AS(fairseq_compute(BleuStats{}), DataError);
  CHECK_THROWS_WITH(parse_bleu_smoothing("add-one"), Catch::Contains("add-one"));
  SacreBleuOptions order2;
  order2.max_order = 2;
  CHECK_THROWS_AS(sacrebleu_compute(BleuStats(4), order2), DataError);
  CHECK_THROWS_AS(BleuStats(4) += BleuStats(2), DataError);
}

TEST_CASE("sacreBLEU signatures name every option", "[bleu][sacrebleu]") {
  SacreBleuOptions options;
  options.tokenizer = BleuTokenizer::kIntl;
  options.lowercase = true;
  options.smoothing = BleuSmoothing::kAddK;
  options.smooth_value = 2;
  options.effective_order = true;
  CHECK(sacrebleu_signature(options, 3) == "nrefs:3|case:lc|eff:yes|tok:intl|smooth:add-k[2.00]|version:2.6.0");
  CHECK(sacrebleu_signature(options, 3, true) == "#:3|c:lc|e:yes|tok:intl|s:add-k[2.00]|v:2.6.0");
}
