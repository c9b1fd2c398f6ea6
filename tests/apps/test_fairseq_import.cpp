// Tests of apps/interop (torch_file, fairseq_checkpoint): fairseq-style checkpoints that
// PyTorch 1.13 wrote (tests/vectors/own/fairseq/pt/make_checkpoints.py) — torch's zip format
// with "args", the zip format with fairseq 0.12's flat "cfg" and float16 weights, the zip format
// with the nested dataclass "cfg" and bfloat16 weights, and the legacy format with fairseq
// 0.5's names — read back as the model they were made from (reference.safetensors): the same
// configuration, and weights equal bit for bit (to float16's or bfloat16's rounding). A model
// attnlab does not build is refused naming the hyperparameter (damaged files:
// tests/apps/test_mutations.cpp).
#include <catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>

#include "apps/interop/fairseq_checkpoint.hpp"
#include "core/safetensors.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::app;
using attn::test::vector_path;

namespace {

std::string pt(const std::string& name) { return vector_path("own/fairseq/pt/" + name); }

void check_weights(const FairseqModel& imported, double relative_tolerance) {
  const SafetensorsFile reference = load_safetensors(pt("reference.safetensors"));
  REQUIRE(imported.weights.size() == reference.tensors.size());
  for (const auto& [name, expected] : reference.tensors) {
    INFO(name);
    REQUIRE(imported.weights.contains(name));
    const Tensor& got = imported.weights.at(name);
    REQUIRE(got.shape() == expected.shape());
    const std::vector<double> a = got.to_vector(), b = expected.to_vector();
    for (size_t i = 0; i < a.size(); ++i)
      if (relative_tolerance == 0.0) REQUIRE(a[i] == b[i]);
      else REQUIRE(std::abs(a[i] - b[i]) <= relative_tolerance * std::abs(b[i]) + 1e-7);
  }
}

}  // namespace

TEST_CASE("fairseq checkpoints of four layouts read back as the model they were made from", "[fairseq_import]") {
  const std::map<std::string, double> tolerance = {
      {"zip_args.pt", 0.0}, {"zip_cfg_half.pt", 1.0 / 1024}, {"zip_cfg_nested_bf16.pt", 1.0 / 256}, {"legacy.pt", 0.0}};
  for (const auto& [file, relative_tolerance] : tolerance) {
    INFO(file);
    const FairseqModel imported = read_fairseq_checkpoint(pt(file));
    CHECK(imported.arch == "transformer");
    CHECK(imported.source_lang == "en");
    CHECK(imported.target_lang == "de");
    const nn::TransformerConfig& c = imported.config;
    CHECK(c.encoder_layers == 1);
    CHECK(c.decoder_layers == 2);
    CHECK(c.encoder_embed_dim == 16);
    CHECK(c.decoder_ffn_embed_dim == 32);
    CHECK(c.decoder_attention_heads == 2);
    CHECK(c.src_vocab_size == 200);
    CHECK(c.tgt_vocab_size == 224);
    CHECK(c.dropout == 0.1);
    CHECK_FALSE(c.share_all_embeddings);
    // fairseq 0.5's decoder (version 2) has no LayerNorm after its stack.
    CHECK(c.no_decoder_final_norm == (file == "legacy.pt"));
    CHECK(imported.left_out == std::vector<std::string>{"encoder.version", "decoder.version",
                                                        "encoder.embed_positions._float_tensor",
                                                        "decoder.embed_positions._float_tensor"});
    check_weights(imported, relative_tolerance);
  }
}

TEST_CASE("a fairseq model attnlab does not build, or a file that is none, is refused naming why", "[fairseq_import]") {
  CHECK_THROWS_WITH(read_fairseq_checkpoint(pt("gelu.pt")),
                    Catch::Contains("gelu.pt") && Catch::Contains("activation_fn = gelu"));
  CHECK_THROWS_WITH(read_fairseq_checkpoint(pt("reference.safetensors")),
                    Catch::Contains("reference.safetensors") && Catch::Contains("not a torch.save file"));
  CHECK_THROWS_WITH(read_fairseq_checkpoint(pt("no-such.pt")), Catch::Contains("no-such.pt"));
}
