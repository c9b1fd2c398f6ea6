// --eval-bleu (apps/training/bleu_validation.hpp): the generation options it reads, the score
// it computes against sacreBLEU on the same hypotheses and references, the sharded score of 2
// ranks, and the trainer keeping checkpoint_best by BLEU.
#include <catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/generation/translator.hpp"
#include "apps/training/bleu_validation.hpp"
#include "share_recorder.hpp"
#include "synthetic_corpus.hpp"

using namespace attn;
using namespace attn::app;

namespace {

// A tiny model trained for `updates` updates on the reversal corpus in `root`.
TrainerOptions reversal_options(const std::string& root, int64_t updates) {
  TrainerOptions options = testing::tiny_trainer_options(root, root + "/ck");
  options.max_update = updates;
  return options;
}

}  // namespace

TEST_CASE("--eval-bleu-args: fairseq's generation keys over the defaults; anything else is an error",
          "[bleu_validation]") {
  const nn::SearchOptions search =
      parse_eval_bleu_args(R"({"beam": 4, "max_len_a": 1.2, "max_len_b": 10, "lenpen": 0.6, "min_len": 2,
                               "no_repeat_ngram_size": 3})");
  CHECK(search.beam == 4);
  CHECK(search.max_len_a == 1.2);
  CHECK(search.max_len_b == 10);
  CHECK(search.lenpen == 0.6);
  CHECK(search.min_len == 2);
  CHECK(search.no_repeat_ngram_size == 3);
  CHECK(parse_eval_bleu_args("{}").beam == nn::SearchOptions{}.beam);  // fairseq's default: '{}'
  CHECK_THROWS_WITH(parse_eval_bleu_args(R"({"beam_size": 4})"), Catch::Contains("unknown key \"beam_size\""));
  CHECK_THROWS_WITH(parse_eval_bleu_args(R"({"beam": 0})"), Catch::Contains("\"beam\" must be an integer >= 1"));
  CHECK_THROWS_WITH(parse_eval_bleu_args(R"({"max_len_a": "1.2"})"), Catch::Contains("\"max_len_a\" must be a number"));
  // Beyond these, length normalisation or the <unk> penalty overflowed into a NaN "model".
  CHECK_THROWS_WITH(parse_eval_bleu_args(R"({"lenpen": -1e308})"),
                    Catch::Contains("\"lenpen\" must be a number in [-20, 20]"));
  CHECK_THROWS_WITH(parse_eval_bleu_args(R"({"unkpen": -1e39})"),
                    Catch::Contains("\"unkpen\" must be a number in [-1000, 1000]"));
  CHECK_THROWS_WITH(parse_eval_bleu_args("beam=4"), Catch::Contains("must be a JSON object"));
}

TEST_CASE("--eval-bleu-detok-args: fairseq's Moses keys, of which target_lang picks the rules", "[eval_bleu]") {
  CHECK(parse_eval_bleu_detok_args("{}").empty());
  CHECK(parse_eval_bleu_detok_args(R"({"target_lang": "de", "source_lang": "en", "moses_no_escape": true})") == "de");
  CHECK_THROWS_WITH(parse_eval_bleu_detok_args(R"({"target_lang": 5})"), Catch::Contains("\"target_lang\" must be"));
  CHECK_THROWS_WITH(parse_eval_bleu_detok_args(R"({"moses_no_dash_splits": "yes"})"), Catch::Contains("true or false"));
  CHECK_THROWS_WITH(parse_eval_bleu_detok_args(R"({"lang": "de"})"), Catch::Contains("unknown key \"lang\""));
  CHECK_THROWS_WITH(parse_eval_bleu_detok_args("[1]"), Catch::Contains("must be a JSON object"));
}

TEST_CASE("evaluate_bleu: sacreBLEU of the split's translations; 2 ranks give the whole split's score",
          "[bleu_validation]") {
  const std::string root = testing::fresh_temp_dir("bleu_validation");
  testing::write_reversal_corpus(root);
  Trainer trainer(reversal_options(root, 60));
  trainer.train();
  const SplitCorpora valid = open_split(trainer.task(), "valid");
  BleuValidationOptions options;
  options.enabled = true;
  options.search.beam = 2;
  options.search.max_len_b = 12;
  const BleuValidation whole =
      evaluate_bleu(trainer.model(), valid, trainer.task().target_dict, options, "tgt", 64, 0);

  // The same translations assembled here, scored by sacreBLEU's corpus score.
  const std::vector<std::vector<int64_t>> sources = valid.source.sentences(), targets = valid.target.sentences();
  const auto translations = translate_sentences(trainer.model(), sources, {.search = options.search, .max_tokens = 64});
  std::vector<std::string> hypotheses, references;
  for (size_t i = 0; i < sources.size(); ++i) {
    hypotheses.push_back(trainer.task().target_dict.decode(translations[i].front().tokens));
    references.push_back(trainer.task().target_dict.decode(targets[i]));
  }
  const data::BleuScore expected = data::sacrebleu_corpus_score(hypotheses, {references}, {});
  CHECK(whole.score.score == Approx(expected.score).margin(1e-9));
  CHECK(whole.score.sys_len == expected.sys_len);
  CHECK(whole.score.ref_len == expected.ref_len);
  CHECK(whole.score.score > 5);  // 60 updates learn some of the reversal: a score that can differ
  CHECK(whole.sample_hypothesis == hypotheses[0]);
  CHECK(whole.sample_reference == references[0]);
  CHECK_THAT(whole.signature, Catch::StartsWith("nrefs:1|case:mixed|eff:no|tok:13a"));

  testing::ShareRecorder zero(0);
  evaluate_bleu(trainer.model(), valid, trainer.task().target_dict, options, "tgt", 64, 0, &zero);
  testing::ShareRecorder one(1, zero.own);
  const BleuValidation sharded =
      evaluate_bleu(trainer.model(), valid, trainer.task().target_dict, options, "tgt", 64, 0, &one);
  CHECK(zero.own[0] > 0);  // each rank translated some sentences
  CHECK(one.own[0] > 0);
  CHECK(sharded.score.score == Approx(whole.score.score).margin(1e-9));
  CHECK(sharded.score.sys_len == whole.score.sys_len);
  CHECK(sharded.score.counts == whole.score.counts);
}

TEST_CASE("trainer --best-checkpoint-metric bleu: checkpoint_best is the epoch of the highest BLEU",
          "[bleu_validation]") {
  const std::string root = testing::fresh_temp_dir("bleu_best");
  testing::write_reversal_corpus(root);
  TrainerOptions options = reversal_options(root, 100);  // 25 epochs of 4 updates
  options.eval_bleu.enabled = true;
  options.eval_bleu.search.beam = 2;
  options.best_checkpoint_metric = "bleu";
  Trainer(options).train();

  double best = -1;
  int64_t best_update = -1;
  std::ifstream log(root + "/ck/train_log.jsonl");
  for (std::string line; std::getline(log, line);) {
    const nlohmann::json record = nlohmann::json::parse(line);
    if (record.at("type") != "valid" || !record.contains("best_loss")) continue;  // epoch ends
    REQUIRE(record.contains("bleu"));
    if (record.at("bleu").get<double>() > best) {
      best = record.at("bleu").get<double>();
      best_update = record.at("update").get<int64_t>();
    }
    CHECK(record.at("best_bleu").get<double>() == best);
  }
  REQUIRE(best_update > 0);
  // The loss falls to the end here, BLEU peaks earlier: the checkpoint a loss would pick is another.
  CHECK(best_update < 100);
  std::ifstream best_json(root + "/ck/checkpoint_best.json");
  const nlohmann::json meta = nlohmann::json::parse(best_json).at("metadata");
  CHECK(meta.at("num_updates").get<int64_t>() == best_update);
  CHECK(meta.at("best_bleu").get<double>() == best);

  SECTION("bleu without --eval-bleu is refused") {
    options.eval_bleu.enabled = false;
    options.save_dir = root + "/other";
    CHECK_THROWS_WITH(Trainer(options), Catch::Contains("--best-checkpoint-metric bleu needs --eval-bleu"));
  }
}
