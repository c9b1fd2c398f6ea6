// The demo report's kNN-MT table (apps/demo/memory_table.hpp): a training sentence with one
// BPE piece marked, the pair and position of a datastore key, and the table of a pair the
// datastore holds (every token's nearest training pair is that pair itself).
#include <catch.hpp>

#include "apps/demo/memory_table.hpp"
#include "nn/tiny_transformer.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::app;

TEST_CASE("marked_sentence joins BPE pieces into words and brackets one piece") {
  data::Dictionary dictionary;
  const int64_t er = dictionary.add_symbol("Er"), sag = dictionary.add_symbol("sag@@"), t = dictionary.add_symbol("t"),
                dot = dictionary.add_symbol(".");
  const std::vector<int64_t> sentence{er, sag, t, dot};
  CHECK(marked_sentence(dictionary, sentence, 0) == "[Er] sagt .");
  CHECK(marked_sentence(dictionary, sentence, 1) == "Er [sag]t .");
  CHECK(marked_sentence(dictionary, sentence, 2) == "Er sag[t] .");
  CHECK(marked_sentence(dictionary, sentence, 3) == "Er sagt [.]");
}

TEST_CASE("key_place finds the pair and the token of a datastore key") {
  const std::vector<std::vector<int64_t>> targets{{7, 8, 2}, {9, 2}, {5, 6, 7, 2}};
  CHECK(key_place(targets, 0).pair == 0);
  CHECK(key_place(targets, 2).position == 2);
  CHECK(key_place(targets, 3).pair == 1);
  CHECK(key_place(targets, 3).position == 0);
  CHECK(key_place(targets, 8).pair == 2);
  CHECK(key_place(targets, 8).position == 3);
  CHECK_THROWS_WITH(key_place(targets, 9), Catch::Contains("beyond"));
}

TEST_CASE("the memory table of a stored pair points each token at that pair") {
  manual_seed(6);
  nn::EncoderDecoderModel model(testing::tiny_config(12));
  model.eval();
  const auto sources = testing::random_sentences({5, 4}, 12, 9), targets = testing::random_sentences({4, 6}, 12, 10);
  const nn::KnnRetrieval retrieval{
      std::make_shared<const nn::KnnDatastore>(nn::KnnDatastore::build(model, sources, targets)), 1, 10.0, 0.4};
  data::Dictionary dictionary;
  for (const char* word : {"w4", "w5", "w6", "w7", "w8", "w9", "w10", "w11"}) dictionary.add_symbol(word);
  const ReportTable table =
      knn_memory_table(model, retrieval, dictionary, targets, sources[1], targets[1], "“x” → “y”");
  REQUIRE(table.rows.size() == targets[1].size());
  CHECK(table.note.starts_with("“x” → “y”, forced through"));
  for (size_t t = 0; t < table.rows.size(); ++t) {
    INFO("token " << t);
    REQUIRE(table.rows[t].size() == table.header.size());
    CHECK(table.rows[t][0] == dictionary.symbol(int32_t(targets[1][t])));
    CHECK(table.rows[t][2] == "1.000");  // k 1: the pair's own state holds the token
    CHECK(table.rows[t][4] == "#2: " + marked_sentence(dictionary, targets[1], t));
  }
}
