// Capturing attention. See attention_capture.hpp.
#include "apps/inspection/attention_capture.hpp"

#include <algorithm>
#include <cmath>

#include "apps/task/raw_text.hpp"
#include "autograd/autograd.hpp"

namespace attn::app {

const std::vector<Tensor>& place_maps(const nn::AttentionMaps& maps, int place) {
  return place == 0 ? maps.encoder_self : place == 1 ? maps.decoder_self : maps.cross;
}

nn::AttentionMaps attention_of_batch(nn::EncoderDecoderModel& model, const Tensor& src_tokens,
                                     const Tensor& prev_output_tokens) {
  NoGradGuard no_grad;
  model.eval();
  nn::AttentionMaps maps;
  const Device device = model.device();
  model.forward(src_tokens.to(device), prev_output_tokens.to(device), &maps);
  for (std::vector<Tensor>* place : {&maps.encoder_self, &maps.decoder_self, &maps.cross})
    for (Tensor& map : *place)
      if (map.defined()) map = map.to(Device::cpu());
  return maps;
}

void check_weights_finite(const double* weights, size_t count, int place, size_t layer, int64_t head,
                          const std::string& whose) {
  const bool finite = std::all_of(weights, weights + count, [](double w) { return std::isfinite(w); });
  ATTN_CHECK(finite,
             "{} produced NaN (or infinite) attention weights in {} layer {} head {}: its weights are not usable; "
             "check the checkpoint",
             whose, kPlaceTitles[place], layer + 1, head + 1);
}

namespace {

// Every weight of a sentence's maps ([1, H, Tq, Tk] per layer, no padding).
void check_maps_finite(const nn::AttentionMaps& maps) {
  for (int place = 0; place < 3; ++place) {
    const std::vector<Tensor>& layers = place_maps(maps, place);
    for (size_t l = 0; l < layers.size(); ++l) {
      const std::vector<double> values = layers[l].to_vector();
      const size_t per_head = size_t(layers[l].size(2) * layers[l].size(3));
      for (int64_t h = 0; h < layers[l].size(1); ++h)
        check_weights_finite(values.data() + size_t(h) * per_head, per_head, place, l, h, "the model");
    }
  }
}

}  // namespace

SentenceAttention capture_attention(nn::EncoderDecoderModel& model, const TranslationTask& task,
                                    const std::vector<int64_t>& source, const std::vector<int64_t>& target) {
  ATTN_CHECK(!source.empty() && !target.empty(), "inspect: empty source or target");
  SentenceAttention s;
  const auto symbols = [](const data::Dictionary& dict, const std::vector<int64_t>& ids) {
    std::vector<std::string> out;
    for (int64_t id : ids) out.push_back(dict.symbol(int32_t(id)));
    return out;
  };
  std::vector<int64_t> shifted = {model.config().eos_idx};  // fairseq's prev_output_tokens
  shifted.insert(shifted.end(), target.begin(), target.end() - 1);
  s.source = symbols(task.source_dict, source);
  s.decoder_output = symbols(task.target_dict, target);
  s.decoder_input = symbols(task.target_dict, shifted);
  s.maps = attention_of_batch(model, from_vector(source, {1, int64_t(source.size())}),
                              from_vector(shifted, {1, int64_t(shifted.size())}));
  check_maps_finite(s.maps);
  return s;
}

SentenceAttention capture_attention_of_text(TrainedModel& trained, const std::string& checkpoint,
                                            const std::string& source, const std::string& target,
                                            const std::string& command, bool tokenize) {
  const TranslationTask& task = trained.task;
  const std::string codes = find_bpe_codes(task, checkpoint, "", command);
  const auto ids = [&](const std::string& language, const data::Dictionary& dict, const std::string& text,
                       const std::string& what) {
    const std::vector<int32_t> encoded = RawTextEncoder(language, codes, dict, tokenize).encode(text, what, 1);
    return std::vector<int64_t>(encoded.begin(), encoded.end());
  };
  return capture_attention(*trained.model, task, ids(task.source_lang, task.source_dict, source, command + " source"),
                           ids(task.target_lang, task.target_dict, target, command + " target"));
}

}  // namespace attn::app
