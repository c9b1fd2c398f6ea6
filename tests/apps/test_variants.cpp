// Every attention variant end to end through the trainer and the decoder (apps/training,
// apps/generation): LightConv, DynamicConv, Linformer (with layerwise sharing), kernelized
// and decaying attention (T2R, gated RFA, the decay rule, the delta rule, Performer), and a model
// that mixes kinds across layers each train, resume bit-identically after an interruption,
// reload from their checkpoint (the config in the metadata rebuilds the same model) and
// translate with beam search.
#include <catch.hpp>


#include "apps/generation/translator.hpp"
#include "synthetic_corpus.hpp"

using namespace attn;
using namespace attn::app;
using testing::bitwise_equal;

namespace {

// The tiny trainer options with a variant's overrides on top.
TrainerOptions variant_options(const std::string& root, const std::string& name, const std::vector<std::string>& overrides) {
  TrainerOptions o = testing::tiny_trainer_options(root, root + "/" + name);
  o.model_overrides.push_back("encoder_layers=2");
  o.model_overrides.push_back("decoder_layers=2");
  o.model_overrides.insert(o.model_overrides.end(), overrides.begin(), overrides.end());
  o.max_update = 8;
  return o;
}

}  // namespace

TEST_CASE("variants train, resume bit-identically, reload and translate", "[trainer][variants]") {
  const std::string root = testing::fresh_temp_dir("variants");
  testing::write_reversal_corpus(root);
  const std::vector<std::pair<std::string, std::vector<std::string>>> variants = {
      {"lightconv", {"encoder_self_mixer=conv", "decoder_self_mixer=conv", "encoder_conv_type=lightweight",
                     "decoder_conv_type=lightweight", "encoder_kernel_size_list=[3,5]", "decoder_kernel_size_list=[3]",
                     "weight_dropout=0.1"}},
      {"dynamicconv", {"encoder_self_mixer=conv", "decoder_self_mixer=conv", "encoder_kernel_size_list=[3]",
                       "decoder_kernel_size_list=[2,4]"}},
      {"linformer", {"encoder_self_mixer=linformer", "cross_mixer=linformer", "linformer_k=4",
                     "max_source_positions=16", "shared_layer_kv_compressed=true"}},
      {"t2r", {"decoder_self_mixer=kernel:t2r+additive", "cross_mixer=kernel:t2r+additive", "causal_proj_dim=4",
               "cross_proj_dim=8"}},
      {"rfa_gated", {"decoder_self_mixer=kernel:rfa+gated", "cross_mixer=kernel:rfa+additive", "cross_proj_dim=4"}},
      {"decay", {"encoder_self_mixer=kernel:dpfp+additive", "decoder_self_mixer=kernel:identity+decay",
                 "cross_mixer=kernel:elu+additive"}},
      {"delta_performer", {"decoder_self_mixer=kernel:dpfp+delta", "cross_mixer=kernel:performer+additive",
                           "cross_proj_dim=8"}},
      {"mixed", {"encoder_self_mixer=conv,softmax", "cross_mixer=softmax,linformer", "decoder_self_mixer=conv,softmax",
                 "encoder_kernel_size_list=[3]", "decoder_kernel_size_list=[3]", "linformer_k=4",
                 "max_source_positions=16"}},
  };
  for (const auto& [name, overrides] : variants) {
    INFO(name);
    const TrainerOptions straight = variant_options(root, name, overrides);
    Trainer uninterrupted(straight);
    REQUIRE(uninterrupted.train().num_updates == 8);

    TrainerOptions first = straight;
    first.save_dir = root + "/" + name + "_resumed";
    first.max_update = 5;
    Trainer(first).train();
    TrainerOptions second = first;
    second.max_update = 8;
    Trainer resumed(second);
    REQUIRE(resumed.num_updates() == 5);
    resumed.train();
    CHECK(bitwise_equal(resumed.model(), uninterrupted.model()));

    const TrainedModel reloaded = load_trained_model(straight.save_dir + "/checkpoint_last", Device::cpu());
    CHECK(bitwise_equal(*reloaded.model, uninterrupted.model()));
    DecodingOptions decoding;
    decoding.search.beam = 3;
    decoding.search.max_len_b = 8;
    const auto hypotheses = translate_sentences(*reloaded.model, {{4, 5, 6, 2}, {7, 8, 2}}, decoding);
    REQUIRE(hypotheses.size() == 2);
    for (const auto& nbest : hypotheses) {
      REQUIRE_FALSE(nbest.empty());
      CHECK(nbest.front().tokens.back() == 2);
    }
  }
}

TEST_CASE("a variant resumed with another rule, or loaded without its feature maps, is refused naming the key",
          "[trainer][variants]") {
  const std::string root = testing::fresh_temp_dir("variants_refused");
  testing::write_reversal_corpus(root);
  TrainerOptions decay = variant_options(root, "decay", {"decoder_self_mixer=kernel:identity+decay"});
  decay.max_update = 2;
  Trainer(decay).train();
  TrainerOptions gated = decay;
  gated.model_overrides.push_back("decoder_self_mixer=kernel:elu+gated");
  gated.max_update = 4;
  CHECK_THROWS_WITH(Trainer(gated),
                    Catch::Matchers::Contains("decoder_self_mixer: \"kernel:identity+decay\" vs \"kernel:elu+gated\""));

  nn::TransformerConfig config = Trainer(decay).model().config();
  const nn::NamedTensors softmax_weights = [&] {
    nn::TransformerConfig softmax = config;
    softmax.decoder_self_mixer = "softmax";
    return nn::EncoderDecoderModel(softmax).state_dict();
  }();
  config.decoder_self_mixer = config.cross_mixer = "kernel:t2r+additive";
  nn::EncoderDecoderModel t2r(config);
  CHECK_THROWS_WITH(t2r.load_state_dict(std::map<std::string, Tensor>(softmax_weights.begin(), softmax_weights.end())),
                    Catch::Matchers::Contains("decoder.layers.0.self_attn.fc3.weight"));
}
