// Tests of apps/interop (torch_file, fairseq_checkpoint): fairseq-style checkpoints that
// PyTorch 1.13 wrote (tests/vectors/own/fairseq/pt/make_checkpoints.py) — torch's zip format
// with "args", the zip format with fairseq 0.12's flat "cfg" and float16 weights, the zip format
// with the nested dataclass "cfg" and bfloat16 weights, and the legacy format with fairseq
// 0.5's names — read back as the model they were made from (reference.safetensors): the same
// configuration, and weights equal bit for bit (to float16's or bfloat16's rounding). A model
// attnlab does not build is refused naming the hyperparameter (damaged files:
// tests/apps/test_mutations.cpp). fairseq's LightConv models, built by fairseq itself, read with
// their conv settings under today's names and the 2019 models'.
#include <catch.hpp>

#include <algorithm>
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

TEST_CASE("fairseq's LightConv models read with their conv settings, under today's names and the 2019 models'",
          "[fairseq_import]") {
  // Built by fairseq itself (make_fairseq_models.py); that they score as fairseq does is
  // tested in tests/apps/test_cli.cpp.
  const FairseqModel today = read_fairseq_checkpoint(pt("fairseq_dynamicconv.pt"));
  const FairseqModel published = read_fairseq_checkpoint(pt("fairseq_dynamicconv_2019.pt"));
  for (const FairseqModel* imported : {&today, &published}) {
    const nn::TransformerConfig& c = imported->config;
    CHECK(imported->arch == "lightconv");
    CHECK(c.encoder_self_mixer == "conv");
    CHECK(c.decoder_self_mixer == "conv");
    CHECK(c.cross_mixer == "softmax");
    CHECK(c.encoder_conv_type == "dynamic");
    CHECK(c.decoder_conv_type == "dynamic");
    CHECK(c.encoder_kernel_size_list == std::vector<int64_t>{3, 5});
    CHECK(c.decoder_kernel_size_list == std::vector<int64_t>{3, 15});
    CHECK(c.encoder_glu);
    CHECK(c.fairseq_dynamic_softmax_span);
    CHECK(c.input_dropout == 0.1);
    CHECK_FALSE(c.no_decoder_final_norm);  // a LightConv decoder's version 2 says nothing of a final norm
  }
  // Today's LayerNorm names and the 2019 ones hold the same weights; conv_bias, never used, is left out.
  REQUIRE(today.weights.size() == published.weights.size());
  for (const auto& [name, weight] : published.weights) {
    INFO(name);
    REQUIRE(today.weights.contains(name));
    CHECK(today.weights.at(name).to_vector() == weight.to_vector());
  }
  CHECK(published.weights.contains("encoder.layers.1.layer_norms.1.weight"));
  CHECK(std::count_if(today.left_out.begin(), today.left_out.end(),
                      [](const std::string& name) { return name.ends_with(".conv.conv_bias"); }) == 4);

  const FairseqModel light = read_fairseq_checkpoint(pt("fairseq_lightconv_prenorm.pt"));
  const nn::TransformerConfig& c = light.config;
  CHECK(c.encoder_conv_type == "lightweight");
  CHECK(c.decoder_conv_type == "lightweight");
  CHECK(c.encoder_normalize_before);
  CHECK(c.decoder_normalize_before);
  CHECK(c.encoder_glu);
  CHECK_FALSE(c.decoder_glu);
  CHECK(c.encoder_conv_dim == 24);
  CHECK(c.decoder_layers == 1);
  CHECK(c.share_decoder_input_output_embed);
  // Taps saved as [H, K] (fairseq's CUDA layer) are attnlab's [H, 1, K].
  CHECK(light.weights.at("decoder.layers.0.conv.weight").shape() == Shape{2, 1, 5});
}
