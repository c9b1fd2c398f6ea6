// The demo's comparison of variants (apps/demo/variant_comparison.hpp) on the synthetic task
// with a very small model: every teaching variant trained for the same updates, the finetuned
// T2R starting from the comparison's transformer, the decoding state of a recurrent decoder
// smaller than the softmax cache, the table written, and a rerun that trains nothing again.
#include <catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "apps/demo/variant_comparison.hpp"
#include "core/safetensors.hpp"
#include "synthetic_corpus.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::app;
using attn::test::read_file;
namespace fs = std::filesystem;

TEST_CASE("demo --compare trains every teaching variant for the same updates and tabulates them") {
  const std::string root = testing::fresh_temp_dir("attnlab_compare");
  testing::write_reversal_corpus(root);
  int scored = 0;
  ComparisonSetup setup{root + "/compare", testing::tiny_trainer_options(root, ""), 3, {}, {}, "", ""};
  std::erase_if(setup.training.model_overrides,  // the presets' depth (LightConv lists a kernel per layer)
                [](const std::string& o) { return o.ends_with("_layers=1"); });
  setup.score_test_set = [&](const std::string& checkpoint, const std::string&) {
    ++scored;
    REQUIRE(fs::exists(checkpoint + ".safetensors"));
    return ComparisonSetup::Scored{double(scored), 2.0, 100};
  };
  const std::vector<VariantResult> results = compare_variants(setup);
  REQUIRE(results.size() == teaching_variants().size());
  CHECK(scored == int(results.size()));
  std::map<std::string, VariantResult> by_name;
  for (const VariantResult& r : results) {
    INFO(r.name);
    by_name[r.name] = r;
    CHECK(checkpoint_progress(r.checkpoint).num_updates == 3);
    CHECK(r.decode_tokens_per_second == 50.0);
    CHECK(r.state_bytes > 0);
    CHECK(r.parameters > 0);
    CHECK(r.train_minutes > 0);  // from the run's done record
  }
  // The finetuned T2R started from the comparison's transformer: the swap kept its weights.
  const auto converted = load_safetensors(root + "/compare/t2r_finetuned/converted.safetensors");
  const auto transformer = load_safetensors(root + "/compare/transformer/checkpoint_last.safetensors");
  CHECK(converted.at("encoder.embed_tokens.weight").to_vector() == transformer.at("encoder.embed_tokens.weight").to_vector());
  // T2R keeps a fixed-size state; softmax attention caches every key and value.
  CHECK(by_name.at("t2r").state_bytes < by_name.at("transformer").state_bytes);

  const std::string table = read_file(root + "/compare/table.md");
  CHECK(std::count(table.begin(), table.end(), '\n') == 2 + int(results.size()));
  CHECK(nlohmann::json::parse(read_file(root + "/compare/table.json")).size() == results.size());
  CHECK(comparison_table(results, 3).rows.size() == results.size());

  // A rerun finds every variant trained: nothing is trained again.
  const auto written = fs::last_write_time(root + "/compare/decay/checkpoint_last.safetensors");
  setup.only = {"decay"};
  REQUIRE(compare_variants(setup).size() == 1);
  CHECK(fs::last_write_time(root + "/compare/decay/checkpoint_last.safetensors") == written);
  setup.only = {"gpt"};
  CHECK_THROWS_WITH(compare_variants(setup), Catch::Contains("unknown variant 'gpt'"));
}
