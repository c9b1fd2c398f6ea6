// Every sequence mixer on the emulated CUDA runtime (cuda/emulator/runtime/), against the same
// model on the CPU: a training step's loss and every gradient (dropout on: the same Philox
// masks), the attention maps inspection draws (implied ones included), and beam search with
// each mixer's incremental state. The runtime keeps device memory out of the host's reach, so
// a mixer that reads a device tensor's bytes on the host fails here as it would crash on a GPU.
#include <catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "apps/generation/translator.hpp"
#include "autograd/autograd.hpp"
#include "autograd/ops.hpp"
#include "emulated_device.hpp"

using namespace attn;
using app::testing::kCuda;

namespace {

// Element-wise within `margin` or `relative` of the CPU's value: float32 sums in other orders
// (a Performer's exponential features amplify them to a few 1e-4 in some gradients).
void check_close(const Tensor& on_device, const Tensor& on_cpu, double margin, double relative = 1e-4) {
  const std::vector<double> d = on_device.to_vector(), c = on_cpu.to_vector();
  REQUIRE(d.size() == c.size());
  for (size_t i = 0; i < c.size(); ++i) CHECK(d[i] == Approx(c[i]).epsilon(relative).margin(margin));
}

}  // namespace

TEST_CASE("every mixer trains, shows its attention and decodes on the device as on the CPU", "[device]") {
  app::testing::switch_on_emulated_cuda();
  const auto [preset, mixers] = GENERATE(table<std::string, std::vector<std::string>>({
      {"lightconv_tiny", {}},
      {"dynamicconv_tiny", {}},
      {"linformer_tiny", {}},
      {"t2r_tiny", {}},
      {"elu_tiny", {}},
      {"rfa_tiny", {}},
      {"decay_tiny", {}},
      {"transformer_tiny", {"decoder_self_mixer=kernel:dpfp+delta"}},
      {"transformer_tiny", {"decoder_self_mixer=kernel:performer+gated", "causal_proj_dim=4"}},
  }));
  INFO(preset << (mixers.empty() ? "" : " + " + mixers.front()));
  std::vector<std::string> extra = {"dropout=0.1", "attention_dropout=0.1"};
  extra.insert(extra.end(), mixers.begin(), mixers.end());
  const nn::TransformerConfig config = app::testing::test_size_config(preset, extra);
  manual_seed(21);
  nn::EncoderDecoderModel on_cpu(config);
  manual_seed(21);
  nn::EncoderDecoderModel on_device(config);  // the same initial weights, then moved
  on_device.to(kCuda);

  // Sources left-padded and targets right-padded (pad = 1), as batches are.
  const Tensor src = from_vector<int64_t>({1, 1, 5, 6, 2, 7, 8, 9, 10, 2}, {2, 5});
  const Tensor prev = from_vector<int64_t>({2, 11, 12, 1, 2, 13, 14, 15}, {2, 4});
  const Tensor weights = from_vector<float>(std::vector<float>(2 * 4 * 20, 0.5f), {2, 4, 20});
  std::map<std::string, Tensor> loss;
  for (nn::EncoderDecoderModel* model : {&on_cpu, &on_device}) {
    const Device device = model == &on_cpu ? Device::cpu() : kCuda;
    model->train();
    manual_seed(5);  // the dropout masks and random features of this step
    const Tensor logits = model->forward(src.to(device), prev.to(device));
    loss[device.str()] = sum(mul(logits, weights.to(device)));
    backward(loss[device.str()]);
  }
  check_close(loss.at(kCuda.str()), loss.at("cpu"), 1e-3);
  const nn::NamedTensors cpu_params = on_cpu.named_parameters(), device_params = on_device.named_parameters();
  for (size_t i = 0; i < cpu_params.size(); ++i) {
    INFO(cpu_params[i].first);
    CHECK(grad(device_params[i].second).device() == kCuda);
    check_close(grad(device_params[i].second), grad(cpu_params[i].second), 1e-4, 1e-3);
  }

  NoGradGuard no_grad;
  on_cpu.eval();
  on_device.eval();
  nn::AttentionMaps cpu_maps, device_maps;
  on_cpu.forward(src, prev, &cpu_maps);
  on_device.forward(src.to(kCuda), prev.to(kCuda), &device_maps);
  REQUIRE(device_maps.cross.size() == cpu_maps.cross.size());
  for (size_t l = 0; l < cpu_maps.cross.size(); ++l) {
    INFO("layer " << l);
    for (const auto* maps : {&device_maps.encoder_self, &device_maps.decoder_self, &device_maps.cross})
      CHECK((*maps)[l].device() == kCuda);  // implied maps too, wherever they are built
    check_close(device_maps.encoder_self[l], cpu_maps.encoder_self[l], 1e-5);
    check_close(device_maps.decoder_self[l], cpu_maps.decoder_self[l], 1e-5);
    check_close(device_maps.cross[l], cpu_maps.cross[l], 1e-5);
  }

  app::DecodingOptions decoding;
  decoding.search.beam = 3;
  decoding.search.max_len_b = 8;  // a few steps of each state are what is checked
  decoding.search.no_repeat_ngram_size = 2;
  const std::vector<std::vector<int64_t>> sources = {{5, 6, 7, 2}, {8, 9, 2}, {10, 11, 12, 13, 2}};
  const auto cpu_out = app::translate_sentences(on_cpu, sources, decoding);
  const auto device_out = app::translate_sentences(on_device, sources, decoding);
  for (size_t i = 0; i < sources.size(); ++i) {
    CHECK(device_out[i].front().tokens == cpu_out[i].front().tokens);
    CHECK(device_out[i].front().score == Approx(cpu_out[i].front().score).margin(1e-4));
  }
}
