// `attnlab demo` end to end (README.md "The demo"): the binary (ATTNLAB_BINARY) runs the whole
// pipeline — prepare, tokenize, BPE, binarize, train, average, kNN-MT beam search, report with
// its table of what the memory contributed — on a synthetic Ding dictionary of 2,304 sentence
// pairs (the demo holds out 1,000 for valid and 1,000 for test) for 20 updates with dropout 0.2, then again with
// another kNN-MT λ (every stage before the search skipped, the datastore read back from gen/),
// then once more unchanged (nothing redone).
#include <catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "data/text_io.hpp"
#include "test_support.hpp"

using attn::test::read_file;
using attn::test::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr int kTimeoutSeconds = 300;  // a run takes seconds; only a hang reaches this

// One dictionary line per sentence pair "Subject verb object adverb.", every combination of
// the parts below (8 · 6 · 8 · 6 = 2,304 pairs), beside a word entry as the real file has.
std::string synthetic_ding() {
  using Pairs = std::vector<std::pair<const char*, const char*>>;
  const Pairs subjects{{"The cat", "Die Katze"},     {"The dog", "Der Hund"},   {"My friend", "Mein Freund"},
                       {"Our teacher", "Unser Lehrer"}, {"The child", "Das Kind"}, {"A farmer", "Ein Bauer"},
                       {"His sister", "Seine Schwester"}, {"The doctor", "Der Arzt"}};
  const Pairs verbs{{"sees", "sieht"},   {"likes", "mag"}, {"finds", "findet"},
                    {"paints", "malt"}, {"buys", "kauft"}, {"knows", "kennt"}};
  const Pairs objects{{"the house", "das Haus"},    {"the car", "das Auto"},       {"a book", "ein Buch"},
                      {"the tree", "den Baum"},     {"the river", "den Fluss"},    {"a letter", "einen Brief"},
                      {"the garden", "den Garten"}, {"the city", "die Stadt"}};
  const Pairs adverbs{{"today", "heute"}, {"often", "oft"},      {"again", "wieder"},
                      {"now", "jetzt"},   {"rarely", "selten"}, {"here", "hier"}};
  std::string text = "# Version :: synthetic\n";
  for (const auto& [s_en, s_de] : subjects)
    for (const auto& [v_en, v_de] : verbs)
      for (const auto& [o_en, o_de] : objects)
        for (const auto& [a_en, a_de] : adverbs)
          text += std::string("Wort {n} | ") + s_de + " " + v_de + " " + o_de + " " + a_de + ". :: word | " + s_en +
                  " " + v_en + " " + o_en + " " + a_en + ".\n";
  return text;
}

attn::test::ProgramRun run_demo(const TempDir& dir, const std::string& knn_lambda) {
  return attn::test::run_program({ATTNLAB_BINARY, "demo", "--out", dir.file("demo"), "--ding", dir.file("de-en"),
                                  "--max-update", "20", "--bpe-merges", "200", "--beam", "2", "--threads", "2",
                                  "--knn-lambda", knn_lambda, "--dropout", "0.2", "--weight-decay", "0.05"},
                                 dir.file("demo.log"), kTimeoutSeconds);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

nlohmann::json summary(const TempDir& dir) { return nlohmann::json::parse(read_file(dir.file("demo/summary.json"))); }

}  // namespace

TEST_CASE("demo: the whole pipeline, then a rerun with another kNN-MT lambda redoes only the search") {
  TempDir dir;
  attn::test::write_file(dir.dir / "de-en", synthetic_ding());
  const std::string datastore = dir.file("demo/gen/knn_datastore.safetensors");

  const attn::test::ProgramRun first = run_demo(dir, "0.4");
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK(contains(first.output, "train 304 sentence pairs + 0 entries, valid 1000, test 1000 sentence pairs"));
  CHECK_FALSE(contains(first.output, "(done before, skipped)"));
  CHECK(contains(first.output, "train dynamicconv_mini for 20 updates (dropout 0.2, weight decay 0.05) -> "));
  CHECK(contains(first.output, "done training (reached --max-update 20): 20 updates, "));
  CHECK(contains(first.output, "kNN-MT datastore: 2432 decoder states of the training pairs as keys of 64 numbers "
                               "(PCA of the 128-number states, "));
  CHECK(contains(first.output, "% of their variance) in 256 lists, written to " + datastore));
  CHECK(contains(first.output, " (= 0.07 × key variance "));  // T in the keys' unit, as generate prints it
  CHECK(contains(first.output,
                 "sacreBLEU:       BLEU|nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = "));
  CHECK(fs::exists(datastore));
  const nlohmann::json checkpoint = nlohmann::json::parse(read_file(dir.file("demo/checkpoints/checkpoint_last.json")));
  CHECK(checkpoint.at("metadata").at("model_config").at("dropout").get<double>() == 0.2);  // --dropout
  const std::string report = read_file(dir.file("demo/report.html"));
  CHECK(report.starts_with("<!DOCTYPE html>"));
  CHECK(contains(report, "<h2>What the memory contributed (kNN-MT)</h2>"));
  CHECK(contains(report, "<th>p used (λ 0.4)</th>"));
  CHECK(attn::data::read_lines(dir.file("demo/gen/test.de")).size() == 1000);
  const nlohmann::json first_summary = summary(dir);
  CHECK(first_summary.at("sacrebleu").at("score").is_number());
  CHECK(first_summary.at("sacrebleu").at("bootstrap_ci95").get<double>() >= 0.0);  // the resamples' interval
  CHECK(contains(report, " (95% interval over resamples of the test set)"));
  CHECK(contains(first_summary.at("decoding").get<std::string>(), "lambda 0.4"));

  const attn::test::ProgramRun second = run_demo(dir, "0.3");
  INFO(second.output);
  REQUIRE(second.exit_code == 0);
  for (const char* stage : {"[1/8]", "[2/8]", "[3/8]", "[4/8]", "[5/8]", "[7/8]"}) {
    const size_t line = second.output.find(stage);
    REQUIRE(line != std::string::npos);
    CHECK(contains(second.output.substr(line, second.output.find('\n', line) - line), "(done before, skipped)"));
  }
  CHECK(contains(second.output, "20 updates, none of them in this run"));
  CHECK(contains(second.output, "[8/8] beam search (beam 2, kNN-MT lambda 0.3) on the test set -> " +
                                    dir.file("demo/gen/test.de") + "\n"));
  CHECK(contains(second.output, "% of their variance) in 256 lists, read from " + datastore));
  CHECK(contains(summary(dir).at("decoding").get<std::string>(), "lambda 0.3"));
  CHECK(contains(read_file(dir.file("demo/report.html")), "<th>p used (λ 0.3)</th>"));
  const std::string translations = read_file(dir.file("demo/gen/test.de"));
  // The summary's translate command decodes typed sentences as the test set was decoded.
  const std::string command = summary(dir).at("translate_command").get<std::string>();
  CHECK(contains(command, " --knn-lambda 0.3 "));
  const std::string shell = "cd " + dir.dir.string() + " && " + command + " < demo/raw/test.en > typed.de 2> typed.err";
  REQUIRE(std::system(shell.c_str()) == 0);
  CHECK(read_file(dir.file("typed.de")) == translations);

  const attn::test::ProgramRun third = run_demo(dir, "0.3");
  INFO(third.output);
  REQUIRE(third.exit_code == 0);
  CHECK(contains(third.output, "[8/8] beam search (beam 2, kNN-MT lambda 0.3) on the test set -> " +
                                   dir.file("demo/gen/test.de") + " (done before, skipped)"));
  CHECK_FALSE(contains(third.output, "kNN-MT datastore"));
  CHECK(read_file(dir.file("demo/gen/test.de")) == translations);
}
