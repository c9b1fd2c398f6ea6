// The encoder–decoder Transformer (nn/transformer/, docs/models.md §1.2–1.5): fairseq
// state-dict names and tying, config presets/JSON/overrides, float64 gradchecks of the
// encoder and decoder layers (post- and pre-norm), incremental decoding == the parallel
// forward, padding invariance, and attention inspection.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "../autograd/grad_test_util.hpp"
#include "float64_params.hpp"
#include "test_support.hpp"
#include "tiny_transformer.hpp"

using namespace attn;
using namespace attn::testing;
using attn::test::check_close;

namespace {

std::vector<std::string> state_names(const nn::Module& m) {
  std::vector<std::string> names;
  for (auto& [name, t] : m.state_dict()) names.push_back(name);
  return names;
}

std::map<std::string, Tensor> weights_by_name(const nn::Module& m) {
  std::map<std::string, Tensor> weights;
  for (auto& [name, t] : m.state_dict()) weights[name] = t;
  return weights;
}

// The lexical model's W starts at zero (its term then vanishes); the tests give it values.
void randomize_lexical_weights(nn::EncoderDecoderModel& model) {
  Tensor& w = model.decoder->lexical_model->proj->weight;
  w.data_only().copy_(uniform(w.shape(), -0.5, 0.5));
}

}  // namespace

TEST_CASE("Transformer state dict uses fairseq's names") {
  nn::TransformerConfig c = tiny_config(12, 1);
  nn::EncoderDecoderModel model(c);
  std::vector<std::string> names = state_names(model);
  auto layer = [](const std::string& prefix, std::initializer_list<const char*> modules) {
    std::vector<std::string> out;
    for (const char* m : modules)
      for (const char* p : {"weight", "bias"}) out.push_back(prefix + m + "." + p);
    return out;
  };
  std::vector<std::string> expected = {"encoder.embed_tokens.weight"};
  for (auto& n : layer("encoder.layers.0.", {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                             "self_attn.out_proj", "self_attn_layer_norm", "fc1", "fc2",
                                             "final_layer_norm"}))
    expected.push_back(n);
  expected.push_back("decoder.embed_tokens.weight");
  for (auto& n : layer("decoder.layers.0.", {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                             "self_attn.out_proj", "self_attn_layer_norm", "encoder_attn.q_proj",
                                             "encoder_attn.k_proj", "encoder_attn.v_proj", "encoder_attn.out_proj",
                                             "encoder_attn_layer_norm", "fc1", "fc2", "final_layer_norm"}))
    expected.push_back(n);
  expected.push_back("decoder.output_projection.weight");
  CHECK(names == expected);
  CHECK(model.named_parameters().size() == expected.size());

  c.share_all_embeddings = true;
  c.encoder_normalize_before = c.decoder_normalize_before = true;
  nn::EncoderDecoderModel tied(c);
  std::map<std::string, Tensor> state;
  for (auto& [name, t] : tied.state_dict()) state[name] = t;
  CHECK(state.count("encoder.layer_norm.weight") == 1);
  CHECK(state.count("decoder.layer_norm.bias") == 1);
  CHECK(state["decoder.embed_tokens.weight"].shares_storage(state["encoder.embed_tokens.weight"]));
  CHECK(state["decoder.output_projection.weight"].shares_storage(state["encoder.embed_tokens.weight"]));
  CHECK(tied.named_parameters().size() == state.size() - 2);
  CHECK(tied.num_parameters() == model.num_parameters() - 2 * 12 * 16 + 4 * 16);

  c.share_all_embeddings = false;
  c.share_decoder_input_output_embed = true;
  c.no_decoder_final_norm = true;
  nn::EncoderDecoderModel half_tied(c);
  state.clear();
  for (auto& [name, t] : half_tied.state_dict()) state[name] = t;
  CHECK(state.count("decoder.layer_norm.weight") == 0);
  CHECK(state["decoder.output_projection.weight"].shares_storage(state["decoder.embed_tokens.weight"]));
  CHECK(!state["decoder.embed_tokens.weight"].shares_storage(state["encoder.embed_tokens.weight"]));
  // A state dict loads back into a fresh model of the same config.
  nn::EncoderDecoderModel copy(c);
  copy.load_state_dict(state);
  CHECK(copy.state_dict().back().second.to_vector() == half_tied.state_dict().back().second.to_vector());
}

TEST_CASE("Transformer config: presets of §1.5, JSON round trip, overrides, validation") {
  nn::TransformerConfig base = nn::transformer_preset("transformer_wmt_en_de");
  CHECK(base.encoder_embed_dim == 512);
  CHECK(base.encoder_ffn_embed_dim == 2048);
  CHECK(base.decoder_attention_heads == 8);
  CHECK(base.encoder_layers == 6);
  CHECK(base.dropout == 0.1);
  nn::TransformerConfig vaswani = nn::transformer_preset("transformer_vaswani_wmt_en_de_big");
  CHECK(vaswani.decoder_embed_dim == 1024);
  CHECK(vaswani.decoder_ffn_embed_dim == 4096);
  CHECK(vaswani.encoder_attention_heads == 16);
  CHECK(vaswani.dropout == 0.3);
  CHECK(vaswani.attention_dropout == 0.0);
  CHECK(nn::transformer_preset("transformer_wmt_en_de_big").attention_dropout == 0.1);
  CHECK(nn::transformer_preset("transformer_wmt_en_de_big_t2t").decoder_normalize_before);
  nn::TransformerConfig tiny = nn::transformer_preset("transformer_tiny");
  CHECK(tiny.encoder_embed_dim == 256);
  CHECK(tiny.decoder_ffn_embed_dim == 1024);
  CHECK(tiny.encoder_attention_heads == 4);
  CHECK(tiny.encoder_layers == 3);
  CHECK(tiny.decoder_layers == 3);
  CHECK(tiny.dropout == 0.1);
  CHECK_THROWS_WITH(nn::transformer_preset("transformer_huge"), Catch::Contains("transformer_tiny"));

  nn::apply_overrides(tiny, {"encoder-layers=2", "dropout=0.25", "share_all_embeddings=true", "cross_mixer=softmax",
                             "linformer_k=64", "encoder-kernel-size-list=[3, 5]"});
  CHECK(tiny.encoder_layers == 2);
  CHECK(tiny.dropout == 0.25);
  CHECK(tiny.share_all_embeddings);
  CHECK(tiny.linformer_k == 64);
  CHECK(tiny.encoder_kernel_size_list == std::vector<int64_t>{3, 5});
  nlohmann::json j = nn::to_json(tiny);
  CHECK(j["encoder_layers"] == 2);
  CHECK(j["mixer_options"]["linformer_k"] == 64);  // variant options under mixer_options
  CHECK(j["mixer_options"]["encoder_kernel_size_list"] == nlohmann::json::array({3, 5}));
  CHECK_FALSE(j.contains("linformer_k"));
  CHECK(nn::to_json(nn::config_from_json(j)) == j);
  CHECK_THROWS_WITH(nn::apply_override(tiny, "encoder_layerz=2"), Catch::Contains("unknown key 'encoder_layerz'"));
  CHECK_THROWS_WITH(nn::apply_override(tiny, "dropout=high"), Catch::Contains("dropout"));
  CHECK_THROWS_WITH(nn::apply_override(tiny, "encoder_layers=2.5"), Catch::Contains("encoder_layers"));
  CHECK_THROWS_WITH(nn::apply_override(tiny, "share_all_embeddings=maybe"), Catch::Contains("true/false"));
  CHECK_THROWS_AS(nn::apply_override(tiny, "no_equals_sign"), Error);
  j["bogus"] = 1;
  CHECK_THROWS_WITH(nn::config_from_json(j), Catch::Contains("bogus"));

  nn::TransformerConfig bad = tiny_config();
  bad.encoder_attention_heads = 5;
  CHECK_THROWS_WITH(nn::EncoderDecoderModel(bad), Catch::Contains("not divisible"));
  bad = tiny_config();
  bad.src_vocab_size = 0;
  CHECK_THROWS_WITH(nn::EncoderDecoderModel(bad), Catch::Contains("src_vocab_size"));
  bad = tiny_config();
  bad.tgt_vocab_size = 20;
  bad.share_all_embeddings = true;
  CHECK_THROWS_WITH(nn::EncoderDecoderModel(bad), Catch::Contains("joined dictionary"));
  bad = tiny_config();
  bad.cross_mixer = "no_such_mixer";
  CHECK_THROWS_WITH(nn::EncoderDecoderModel(bad), Catch::Contains("no_such_mixer"));
}

namespace {

// tiny_config() with "key=value" overrides, not yet validated.
nn::TransformerConfig config_with(const std::vector<std::string>& overrides) {
  nn::TransformerConfig c = tiny_config();
  nn::apply_overrides(c, overrides);
  return c;
}

void validation_fails_with(const nn::TransformerConfig& c, const std::string& text) {
  CHECK_THROWS_WITH(c.validate(), Catch::Contains(text));
}

}  // namespace

TEST_CASE("config: per-layer mixers and the variant options are checked before any work") {
  CHECK_NOTHROW(config_with({"encoder_self_mixer=conv,softmax", "encoder_kernel_size_list=[3]"}).validate());
  CHECK(nn::mixer_kind_of_layer("conv,softmax", 1) == "softmax");
  CHECK(nn::mixer_kind_of_layer("conv", 5) == "conv");
  validation_fails_with(config_with({"encoder_self_mixer=conv,conv,softmax"}), "lists 3 mixers but there are 2 layers");
  validation_fails_with(config_with({"decoder_self_mixer=linformer"}), "cannot be causal");
  validation_fails_with(config_with({"cross_mixer=conv"}), "this place takes: softmax, linformer");
  validation_fails_with(config_with({"encoder_self_mixer=conv", "encoder_kernel_size_list=[3,4]"}), "needs odd kernel sizes");
  validation_fails_with(config_with({"encoder_self_mixer=conv", "encoder_kernel_size_list=[3,5,7]"}), "has 3 entries but there are 2");
  validation_fails_with(config_with({"decoder_self_mixer=conv", "decoder_conv_type=fancy"}), "lightweight or dynamic");
  validation_fails_with(config_with({"cross_mixer=linformer", "linformer_k=4096"}), "projected length k = 4096");
  CHECK_THROWS_WITH(config_with({"encoder_kernel_size_list=[3,x]"}), Catch::Contains("encoder_kernel_size_list"));
}

TEST_CASE("config: layer counts and sizes are bounded before anything is built, naming the field and the bound") {
  CHECK_NOTHROW(config_with({"encoder_layers=1024", "decoder_layers=1024"}).validate());
  validation_fails_with(config_with({"encoder_layers=2147483648"}), "encoder_layers must be at most 1024, got 2147483648");
  validation_fails_with(config_with({"decoder_layers=99999999999"}), "decoder_layers must be at most 1024");
  for (const char* field : {"src_vocab_size", "encoder_ffn_embed_dim", "decoder_attention_heads",
                            "max_target_positions", "causal_proj_dim", "linformer_k"})
    validation_fails_with(config_with({std::string(field) + "=16777217"}), std::string(field) + " must be at most 16777216");
  validation_fails_with(config_with({"encoder_self_mixer=conv", "encoder_kernel_size_list=[3,16777217]"}),
             "encoder_kernel_size_list holds 16777217");
  // Each size within its bound, the whole too large to build: refused before any allocation.
  validation_fails_with(config_with({"encoder_embed_dim=65536", "decoder_embed_dim=65536", "encoder_attention_heads=1",
                   "decoder_attention_heads=1"}),
             "numbers (weights and position tables), more than the 4.29e+09 this toolkit builds");
  validation_fails_with(config_with({"max_source_positions=16777216", "cross_mixer=linformer", "compressed=1"}),
             "more than the 4.29e+09");
  CHECK_NOTHROW(config_with({"max_source_positions=16777216"}).validate());  // no Linformer: no E and F to allocate
}

TEST_CASE("config: a checkpoint's JSON must hold the sizes, an integer field an integer in range") {
  const nlohmann::json good = nn::to_json(tiny_config());
  auto fails_with = [](const nlohmann::json& j, const std::string& text) {
    CHECK_THROWS_WITH(nn::config_from_json(j), Catch::Contains(text));
  };
  for (const char* field : {"encoder_layers", "arch", "max_source_positions"}) {
    nlohmann::json missing = good;
    missing.erase(field);
    fails_with(missing, fmt::format("no field '{}'", field));
  }
  // A field added after the format began keeps its default: the model the versions before it built.
  nlohmann::json from_before = good;
  from_before.erase("lexical_model");
  from_before.erase("mixer_options");
  CHECK(nn::config_differences(nn::config_from_json(from_before), tiny_config()).empty());
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"src_vocab_size", 1e30}, {"encoder_embed_dim", 16.5}, {"encoder_layers", true},
           {"decoder_layers", nlohmann::json(uint64_t(1) << 63)}, {"max_source_positions", "1024"}}) {
    nlohmann::json bad = good;
    bad[field] = value;
    fails_with(bad, fmt::format("field '{}' must be an integer, got {}", field, value.dump()));
  }
  nlohmann::json bad_list = good;
  bad_list["mixer_options"]["encoder_kernel_size_list"] = {3, 7.5};
  fails_with(bad_list, "field 'encoder_kernel_size_list' must be a list of integers");
  nlohmann::json huge = good;
  huge["encoder_layers"] = 2147483648;  // read as it is; validate() bounds it
  CHECK_THROWS_WITH(nn::config_from_json(huge).validate(), Catch::Contains("encoder_layers must be at most 1024"));
}

TEST_CASE("presets named as fairseq's architectures, and teaching sizes") {
  const nn::TransformerConfig big = nn::transformer_preset("lightconv_wmt_en_de_big");
  CHECK(big.encoder_layers == 7);
  CHECK(big.encoder_embed_dim == 1024);
  CHECK(big.weight_dropout == 0.1);
  CHECK(big.encoder_conv_type == "lightweight");
  CHECK(big.encoder_kernel_size_list == std::vector<int64_t>{3, 7, 15, 31, 31, 31, 31});
  CHECK(nn::transformer_preset("dynamicconv_wmt_en_de").decoder_conv_type == "dynamic");
  CHECK_FALSE(nn::transformer_preset("lightconv_iwslt_de_en").encoder_glu);
  const nn::TransformerConfig demo = nn::transformer_preset("dynamicconv_mini");  // the demo's model
  CHECK(demo.decoder_conv_type == "dynamic");
  CHECK(demo.decoder_kernel_size_list == std::vector<int64_t>{3, 7, 15});
  CHECK(demo.encoder_embed_dim == 128);
  CHECK(demo.decoder_ffn_embed_dim == 512);
  CHECK(demo.cross_mixer == nn::transformer_preset("transformer_mini").cross_mixer);
  const nn::TransformerConfig linformer = nn::transformer_preset("linformer_tiny");
  CHECK(linformer.cross_mixer == "linformer");
  CHECK(nn::linformer_projected_length(linformer) == 8);
  CHECK(nn::linformer_projected_length(nn::transformer_preset("linformer_wmt_en_de")) == 256);
  for (const std::string& name : nn::transformer_preset_names()) CHECK(nn::transformer_preset(name).arch == name);
}

TEST_CASE("encoder and decoder layers gradcheck in float64, post-norm and pre-norm, LayerNorm and ScaleNorm") {
  for (auto [pre_norm, scale_norm] : {std::pair{false, false}, {true, false}, {false, true}, {true, true}}) {
    nn::TransformerConfig c = tiny_config();
    c.scale_norm = scale_norm;
    c.encoder_embed_dim = c.decoder_embed_dim = 4;
    c.encoder_ffn_embed_dim = c.decoder_ffn_embed_dim = 6;
    c.encoder_attention_heads = c.decoder_attention_heads = 2;
    c.encoder_normalize_before = c.decoder_normalize_before = pre_norm;
    c.ffn_init = "torch";
    c.dropout = 0.0;  // deterministic for finite differences (layers are in training mode)
    Tensor pad = ops::ne(from_vector<int64_t>({1, 0, 0, 0, 0, 0}, {2, 3}), 0.0);

    nn::TransformerEncoderLayer enc(c, 0);
    Leaves enc_inputs = {leaf({2, 3, 4}, 50)};
    append(enc_inputs, to_float64(enc));
    GradcheckResult re = gradcheck([&](const std::vector<Tensor>& in) { return enc.forward(in[0], pad); }, enc_inputs);
    INFO(re.message);
    CHECK(re.ok);

    nn::TransformerDecoderLayer dec(c, 0);
    Leaves dec_inputs = {leaf({2, 2, 4}, 51), leaf({2, 3, 4}, 52)};
    append(dec_inputs, to_float64(dec));
    GradcheckResult rd = gradcheck(
        [&](const std::vector<Tensor>& in) { return dec.forward(in[0], Tensor(), in[1], pad); }, dec_inputs);
    INFO(rd.message);
    CHECK(rd.ok);
  }
}

TEST_CASE("incremental decoding equals the parallel forward (left-padded sources, post- and pre-norm, tied, "
          "ScaleNorm + FixNorm, the lexical model)") {
  struct Case {
    bool pre_norm, scale_and_fix_norm, lexical_model;
  };
  for (Case k : {Case{false, false, false}, {true, false, false}, {true, true, false}, {false, false, true},
                 {true, false, true}}) {
    nn::TransformerConfig c = tiny_config();
    c.encoder_normalize_before = c.decoder_normalize_before = k.pre_norm;
    c.share_all_embeddings = k.pre_norm;
    c.scale_norm = c.fix_norm = k.scale_and_fix_norm;
    c.lexical_model = k.lexical_model;
    manual_seed(11);
    nn::EncoderDecoderModel model(c);
    if (k.lexical_model) randomize_lexical_weights(model);
    model.eval();
    NoGradGuard no_grad;
    Tensor src = pad_batch(random_sentences({3, 6, 1}, 12, 1), true);
    std::vector<std::vector<int64_t>> targets = random_sentences({5, 5, 5}, 12, 2);
    for (auto& t : targets) t.insert(t.begin(), kEos), t.pop_back();  // </s> y_1 … y_5
    Tensor prev = pad_batch(targets, false);
    nn::AttentionMaps maps;
    Tensor full = ops::log_softmax(model.forward(src, prev, &maps), -1);

    nn::DecoderState state = model.init_decoder_state(model.encode(src));
    for (int64_t t = 0; t < prev.size(1); ++t) {
      Tensor cross;
      Tensor step = model.decode_step(prev.select(1, t).contiguous(), state, &cross);
      check_close(step, full.select(1, t), 1e-5);
      check_close(cross, ops::mean(maps.cross.back().select(2, t), {1}), 1e-5);
    }
    CHECK(state.length == prev.size(1));
  }
}

TEST_CASE("lexical model (§1.2.2): the output states gain h of the attended source embeddings, and it trains") {
  nn::TransformerConfig c = tiny_config();
  c.share_all_embeddings = true;
  c.encoder_normalize_before = c.decoder_normalize_before = true;
  c.lexical_model = true;
  manual_seed(15);
  nn::EncoderDecoderModel with(c);
  randomize_lexical_weights(with);
  c.lexical_model = false;
  nn::EncoderDecoderModel without(c);
  const std::map<std::string, Tensor> weights = weights_by_name(with);
  CHECK(weights.count("decoder.lexical_model.proj.weight") == 1);
  without.load_state_dict(weights, /*strict=*/false);
  Tensor src = pad_batch(random_sentences({2, 5}, 12, 9), true);
  Tensor prev = pad_batch(random_sentences({4, 2}, 12, 10), false);
  {
    with.eval();
    without.eval();
    NoGradGuard no_grad;
    nn::AttentionMaps maps;
    with.forward(src, prev, &maps);
    const Tensor source_embeddings =
        with.encoder->embed_tokens->forward(src) * std::sqrt(double(c.encoder_embed_dim));
    const Tensor lexical = with.decoder->lexical_model->forward(ops::mean(maps.cross.back(), {1}), source_embeddings);
    check_close(with.extract_features(src, prev) - without.extract_features(src, prev), lexical, 1e-5);
  }
  with.train();
  backward(sum(with.forward(src, prev)));
  CHECK(ops::amax(ops::abs(grad(with.decoder->lexical_model->proj->weight))).item() > 0.0);
  c.lexical_model = true;
  nn::EncoderDecoderModel fresh(c);  // W = 0 at the start: the term is zero
  NoGradGuard no_grad;
  fresh.eval();
  without.load_state_dict(weights_by_name(fresh), /*strict=*/false);
  without.eval();
  check_close(fresh.extract_features(src, prev), without.extract_features(src, prev), 1e-6);

  nn::TransformerConfig linformer_cross = tiny_config();
  linformer_cross.lexical_model = true;
  linformer_cross.cross_mixer = "linformer";
  CHECK_THROWS_WITH(linformer_cross.validate(), Catch::Contains("lexical_model reads the last decoder layer's"));
}

TEST_CASE("a target vocabulary that is the shared embedding's first rows: the output layer scores those only") {
  nn::TransformerConfig joined = tiny_config(16);  // a target-first joined dictionary of 16 symbols
  joined.share_all_embeddings = joined.encoder_normalize_before = joined.decoder_normalize_before = true;
  nn::TransformerConfig target_first = joined;
  target_first.tgt_vocab_size = 12;  // the target side's symbols: the first 12
  manual_seed(17);
  nn::EncoderDecoderModel model(target_first), full_vocabulary(joined);
  const nn::NamedTensors weights = model.state_dict();  // the same weights: one [16, D] embedding
  full_vocabulary.load_state_dict(std::map<std::string, Tensor>(weights.begin(), weights.end()));
  model.eval(), full_vocabulary.eval();
  NoGradGuard no_grad;
  Tensor src = pad_batch(random_sentences({4, 2}, 16, 5), true);  // source ids up to 15
  std::vector<std::vector<int64_t>> targets = random_sentences({3, 3}, 12, 6);
  for (auto& t : targets) t.insert(t.begin(), kEos), t.pop_back();
  Tensor prev = pad_batch(targets, false);
  Tensor logits = model.forward(src, prev);
  REQUIRE(logits.size(-1) == 12);
  check_close(logits, full_vocabulary.forward(src, prev).narrow(-1, 0, 12).contiguous(), 1e-6);
  Tensor full = ops::log_softmax(logits, -1);
  nn::DecoderState state = model.init_decoder_state(model.encode(src));
  for (int64_t t = 0; t < prev.size(1); ++t)
    check_close(model.decode_step(prev.select(1, t).contiguous(), state), full.select(1, t), 1e-5);
  nn::TransformerConfig bad = target_first;
  bad.tgt_vocab_size = 20;  // more target symbols than the shared embedding has rows
  CHECK_THROWS_WITH(nn::EncoderDecoderModel(bad), Catch::Contains("joined dictionary"));
}

TEST_CASE("FixNorm: the outputs depend on the embedding rows' directions only") {
  for (bool fix_norm : {false, true}) {
    nn::TransformerConfig c = tiny_config();
    c.share_all_embeddings = true;
    c.fix_norm = fix_norm;
    manual_seed(13);
    nn::EncoderDecoderModel model(c);
    model.eval();
    NoGradGuard no_grad;
    Tensor src = pad_batch(random_sentences({4, 2}, 12, 5), true);
    Tensor prev = pad_batch(random_sentences({3, 3}, 12, 6), false);
    Tensor before = model.forward(src, prev);
    Tensor& weight = model.encoder->embed_tokens->weight;
    Tensor row_scales = uniform({weight.size(0), 1}, 0.5, 4.0);  // each row's length changes, not its direction
    weight.data_only().copy_(weight * row_scales);
    Tensor after = model.forward(src, prev);
    if (fix_norm) check_close(after, before, 1e-4);
    else CHECK(ops::amax(ops::abs(after - before)).item() > 0.1);
  }
}

TEST_CASE("padding does not change a sentence's outputs (sources left-padded, targets right-padded)") {
  manual_seed(12);
  nn::EncoderDecoderModel model(tiny_config());
  model.eval();
  NoGradGuard no_grad;
  std::vector<std::vector<int64_t>> sources = random_sentences({2, 7}, 12, 3);
  std::vector<std::vector<int64_t>> targets = random_sentences({3, 1}, 12, 4);
  Tensor batch_logits = model.forward(pad_batch(sources, true), pad_batch(targets, false));
  Tensor alone = model.forward(pad_batch({sources[0]}, true), pad_batch({targets[0]}, false));
  check_close(batch_logits.select(0, 0), alone.select(0, 0), 1e-5);
  Tensor alone1 = model.forward(pad_batch({sources[1]}, true), pad_batch({targets[1]}, false));
  check_close(batch_logits.select(0, 1).narrow(0, 0, 2), alone1.select(0, 0), 1e-5);
}

TEST_CASE("attention inspection: every layer and head, causal and padding structure") {
  manual_seed(13);
  nn::EncoderDecoderModel model(tiny_config());
  model.eval();
  NoGradGuard no_grad;
  Tensor src = pad_batch(random_sentences({2, 4}, 12, 5), true);  // row 0 has 2 pads
  Tensor prev = pad_batch(random_sentences({3, 3}, 12, 6), false);
  nn::AttentionMaps maps;
  model.forward(src, prev, &maps);
  REQUIRE(maps.encoder_self.size() == 2);
  REQUIRE(maps.decoder_self.size() == 2);
  REQUIRE(maps.cross.size() == 2);
  CHECK(maps.encoder_self[1].shape() == Shape{2, 4, 5, 5});
  CHECK(maps.decoder_self[0].shape() == Shape{2, 4, 4, 4});
  CHECK(maps.cross[1].shape() == Shape{2, 4, 4, 5});
  for (int64_t h = 0; h < 4; ++h) {
    CHECK(maps.decoder_self[1].at({0, h, 1, 2}) == 0.0);  // future
    CHECK(maps.cross[0].at({0, h, 3, 1}) == 0.0);         // padded source
    CHECK(maps.encoder_self[0].at({0, h, 4, 0}) == 0.0);
    CHECK(ops::sum(maps.cross[1].select(0, 0).select(0, h).select(0, 2)).item() == Approx(1.0));
  }
}

TEST_CASE("training mode: dropout is active and every parameter gets a gradient") {
  nn::TransformerConfig c = tiny_config();
  c.share_decoder_input_output_embed = true;
  c.attention_dropout = 0.1;
  c.activation_dropout = 0.1;
  manual_seed(14);
  nn::EncoderDecoderModel model(c);
  Tensor src = pad_batch(random_sentences({3, 4}, 12, 7), true);
  Tensor prev = pad_batch(random_sentences({2, 4}, 12, 8), false);
  model.train();
  Tensor a = model.forward(src, prev), b = model.forward(src, prev);
  CHECK(a.to_vector() != b.to_vector());
  backward(sum(a * a));
  for (auto& [name, p] : model.named_parameters()) {
    INFO(name);
    REQUIRE(grad(p).defined());
  }
  model.eval();
  NoGradGuard no_grad;
  CHECK(model.forward(src, prev).to_vector() == model.forward(src, prev).to_vector());
}

TEST_CASE("word dropout (§1.2.1): source and target rates act in training only") {
  nn::TransformerConfig c = tiny_config();
  c.dropout = 0.0;
  Tensor src = pad_batch(random_sentences({3, 4}, 12, 7), true);
  Tensor prev = pad_batch(random_sentences({2, 4}, 12, 8), false);
  manual_seed(15);
  nn::EncoderDecoderModel plain(c);
  plain.eval();
  const std::vector<double> reference = plain.forward(src, prev).to_vector();
  for (const char* side : {"source_word_dropout=0.5", "target_word_dropout=0.5"}) {
    INFO(side);
    nn::TransformerConfig dropped = c;
    nn::apply_override(dropped, side);
    manual_seed(15);  // the same weights as `plain`
    nn::EncoderDecoderModel model(dropped);
    model.train();
    CHECK(model.forward(src, prev).to_vector() != reference);
    model.eval();
    NoGradGuard no_grad;
    CHECK(model.forward(src, prev).to_vector() == reference);
  }
  nn::TransformerConfig bad = c;
  bad.target_word_dropout = 1.0;
  CHECK_THROWS_WITH(nn::EncoderDecoderModel(bad), Catch::Contains("target_word_dropout"));
}

TEST_CASE("parameter counts of the big convolution presets at V = 32,768 with shared embeddings") {
  // Computed by hand from fairseq's modules: embeddings 33,554,432; an encoder conv layer
  // 11,546,624 + 16·K (LightConv) or + 1024·16·K (DynamicConv's weight_linear, no bias); a
  // decoder layer 15,747,072 + the same; K summed over the layers: 149 (encoder), 118 (decoder).
  auto count = [](const std::string& arch) {
    nn::TransformerConfig c = nn::transformer_preset(arch);
    c.src_vocab_size = c.tgt_vocab_size = 32768;
    c.share_all_embeddings = true;
    return nn::EncoderDecoderModel(c).num_parameters();
  };
  CHECK(count("lightconv_wmt_en_de_big") == 208867504);
  CHECK(count("dynamicconv_wmt_en_de_big") == 213237760);
  CHECK(count("transformer_wmt_en_de_big") == 209911808);
}
