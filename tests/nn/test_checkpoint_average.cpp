// Tests for nn/checkpoint_average (docs/models.md §1.11): means of every dtype (integers
// floor-divided), metadata from the first file, mismatches named, and fairseq's choice of
// the last N epoch/update checkpoints.
#include <catch.hpp>

#include "nn/checkpoint_average.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::nn;
using Catch::Matchers::Contains;
using test::TempDir;

namespace {

// A checkpoint whose tensors depend on k.
std::string write_checkpoint(const TempDir& tmp, const std::string& name, float w, double d, int64_t i, bool flag) {
  const std::string path = tmp.file(name);
  save_safetensors(path,
                   {{"decoder.w", from_vector<float>({w, 2 * w}, {2})},
                    {"precise", from_vector<double>({d}, {1})},
                    {"count", from_vector<int64_t>({i, -i}, {2})},
                    {"flag", from_vector<bool>({flag}, {1})}},
                   {{"source", name}});
  return path;
}

}  // namespace

TEST_CASE("averaging gives the arithmetic mean, floor-divides integers and keeps the first metadata",
          "[checkpoint_average]") {
  TempDir tmp;
  std::vector<std::string> inputs = {write_checkpoint(tmp, "a", 1.0f, 0.1, 1, true),
                                     write_checkpoint(tmp, "b", 2.0f, 0.2, 2, true),
                                     write_checkpoint(tmp, "c", 4.0f, 0.4, 4, false)};
  SafetensorsFile avg = average_checkpoints(inputs);
  REQUIRE(avg.tensors.size() == 4);
  CHECK(avg.tensors[0].first == "decoder.w");
  CHECK(avg.at("decoder.w").dtype() == DType::Float32);
  CHECK(*avg.at("decoder.w").data<float>() == float(7.0 / 3.0));  // summed in float64, rounded once
  CHECK(avg.at("decoder.w").data<float>()[1] == float(14.0 / 3.0));
  CHECK(avg.at("precise").item() == (0.1 + 0.2 + 0.4) / 3.0);
  CHECK(avg.at("count").dtype() == DType::Int64);
  CHECK(avg.at("count").data<int64_t>()[0] == 2);   // ⌊7/3⌋
  CHECK(avg.at("count").data<int64_t>()[1] == -3);  // ⌊−7/3⌋, as Python's //
  CHECK(avg.at("flag").dtype() == DType::Bool);
  CHECK(avg.at("flag").item() == 0.0);  // ⌊2/3⌋
  CHECK(avg.metadata.at("source") == "a");

  const std::string out = tmp.file("averaged.safetensors");
  average_checkpoints(inputs, out);
  CHECK(load_safetensors(out).at("precise").item() == (0.1 + 0.2 + 0.4) / 3.0);
  CHECK(average_checkpoints({inputs[1]}).at("count").data<int64_t>()[1] == -2);  // N = 1 is the identity
}

TEST_CASE("averaging names the file and tensor that do not match", "[checkpoint_average]") {
  TempDir tmp;
  const std::string a = write_checkpoint(tmp, "a", 1, 1, 1, true);
  const std::string extra = tmp.file("extra");
  save_safetensors(extra, {{"decoder.w", zeros({2})}, {"precise", zeros({1}, DType::Float64)},
                           {"count", zeros({2}, DType::Int64)}, {"flag", zeros({1}, DType::Bool)},
                           {"more", zeros({1})}});
  CHECK_THROWS_WITH(average_checkpoints({a, extra}), Contains(extra) && Contains("'more'"));
  CHECK_THROWS_WITH(average_checkpoints({extra, a}), Contains(a) && Contains("'more'"));
  const std::string reshaped = tmp.file("reshaped");
  save_safetensors(reshaped, {{"decoder.w", zeros({1, 2})}, {"precise", zeros({1}, DType::Float64)},
                              {"count", zeros({2}, DType::Int64)}, {"flag", zeros({1}, DType::Bool)}});
  CHECK_THROWS_WITH(average_checkpoints({a, reshaped}), Contains("'decoder.w'") && Contains("[1, 2]"));
  CHECK_THROWS_WITH(average_checkpoints({a, tmp.file("missing")}), Contains("missing"));
  CHECK_THROWS_WITH(average_checkpoints({}), Contains("no checkpoints"));
}

TEST_CASE("averaging refuses a checkpoint with NaN or infinite weights, naming the tensor and the file",
          "[checkpoint_average]") {
  TempDir tmp;
  const std::string a = write_checkpoint(tmp, "a", 1, 1, 1, true);
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    INFO(bad);
    const std::string diverged = write_checkpoint(tmp, "diverged", 1, bad, 1, true);
    CHECK_THROWS_WITH(average_checkpoints({a, diverged}),
                      Contains(diverged) && Contains("'precise'") && Contains("NaN or infinite"));
    CHECK_THROWS_WITH(average_checkpoints({diverged}), Contains(diverged));
  }
}

TEST_CASE("the last N checkpoints are chosen by number, newest first", "[checkpoint_average]") {
  TempDir tmp;
  for (const char* name : {"checkpoint1.safetensors", "checkpoint2.safetensors", "checkpoint10.safetensors",
                           "checkpoint9.safetensors", "checkpoint_best.safetensors", "checkpoint_last.safetensors",
                           "checkpoint_2_300.safetensors", "checkpoint_3_1000.safetensors",
                           "checkpoint_3_900.safetensors", "checkpoint11.json", "notes.txt"})
    write_checkpoint(tmp, name, 1, 1, 1, true);
  CHECK(last_checkpoints(tmp.dir.string(), 3, CheckpointNumbering::Epoch) ==
        std::vector<std::string>{tmp.file("checkpoint10.safetensors"), tmp.file("checkpoint9.safetensors"),
                                 tmp.file("checkpoint2.safetensors")});
  CHECK(last_checkpoints(tmp.dir.string(), 2, CheckpointNumbering::Update) ==
        std::vector<std::string>{tmp.file("checkpoint_3_1000.safetensors"), tmp.file("checkpoint_3_900.safetensors")});
  CHECK_THROWS_WITH(last_checkpoints(tmp.dir.string(), 5, CheckpointNumbering::Epoch),
                    Contains("found 4") && Contains("need 5"));
  CHECK_THROWS_WITH(last_checkpoints(tmp.file("nowhere"), 1, CheckpointNumbering::Epoch), Contains("nowhere"));
}

TEST_CASE("averaging copies fixed random features and refuses files whose features differ", "[checkpoint_average]") {
  TempDir tmp;
  const Tensor features = from_vector<float>({0.3f, -1.7f, 2.9f}, {3});
  auto write = [&](const std::string& name, float w, const Tensor& draws) {
    save_safetensors(tmp.file(name), {{"decoder.layers.0.encoder_attn.random_matrices", draws},
                                      {"decoder.layers.0.encoder_attn.random_feature_draws",
                                       from_vector<int64_t>({int64_t(w) * 10}, {1})},
                                      {"decoder.w", from_vector<float>({w}, {1})}});
    return tmp.file(name);
  };
  const std::vector<std::string> same = {write("a", 1, features), write("b", 2, features), write("c", 6, features)};
  const SafetensorsFile avg = average_checkpoints(same);
  CHECK(avg.at("decoder.w").item() == 3.0);
  CHECK(avg.at("decoder.layers.0.encoder_attn.random_matrices").to_vector() == features.to_vector());
  // The training-draw counter differs between checkpoints and is copied from the first.
  CHECK(avg.at("decoder.layers.0.encoder_attn.random_feature_draws").item() == 10.0);
  const std::string other = write("d", 2, from_vector<float>({0.3f, -1.7f, 3.0f}, {3}));
  CHECK_THROWS_WITH(average_checkpoints({same[0], other}),
                    Contains("random_matrices") && Contains("different runs") && Contains(other));
}
