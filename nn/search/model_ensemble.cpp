#include "nn/search/model_ensemble.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "autograd/ops.hpp"

namespace attn::nn {

namespace {

// log (1/M Σ_m exp x_m), element by element, shifted by the largest x_m for stability. In
// elementwise passes over [N, V] rather than a reduction over a stacked [M, N, V]'s outer axis.
Tensor log_mean_exp(const std::vector<Tensor>& xs) {
  Tensor largest = xs.front();
  for (size_t m = 1; m < xs.size(); ++m) largest = ops::maximum(largest, xs[m]);
  Tensor sum = ops::exp(xs.front() - largest);
  for (size_t m = 1; m < xs.size(); ++m) sum = sum + ops::exp(xs[m] - largest);
  return largest + ops::log(sum) - std::log(double(xs.size()));
}

}  // namespace

ModelEnsemble::ModelEnsemble(EncoderDecoderModel& model) : models_{&model} {}

ModelEnsemble::ModelEnsemble(std::vector<EncoderDecoderModel*> models) : models_(std::move(models)) {
  ATTN_CHECK(!models_.empty(), "ensemble: no model given");
  const TransformerConfig& first = config();
  for (size_t m = 1; m < models_.size(); ++m) {
    const TransformerConfig& c = models_[m]->config();
    ATTN_CHECK(c.src_vocab_size == first.src_vocab_size && c.tgt_vocab_size == first.tgt_vocab_size &&
                   c.padding_idx == first.padding_idx && c.eos_idx == first.eos_idx,
               "ensemble: model {} has vocabularies of {} / {} symbols (pad {}, </s> {}), the first {} / {} "
               "(pad {}, </s> {}): the models of an ensemble must share their dictionaries",
               m + 1, c.src_vocab_size, c.tgt_vocab_size, c.padding_idx, c.eos_idx, first.src_vocab_size,
               first.tgt_vocab_size, first.padding_idx, first.eos_idx);
    ATTN_CHECK(models_[m]->device() == device(), "ensemble: model {} is on another device than the first", m + 1);
  }
}

int64_t ModelEnsemble::max_source_positions() const {
  int64_t limit = INT64_MAX;
  for (const EncoderDecoderModel* model : models_) limit = std::min(limit, model->config().max_source_positions);
  return limit;
}

int64_t ModelEnsemble::max_target_positions() const {
  int64_t limit = INT64_MAX;
  for (const EncoderDecoderModel* model : models_) limit = std::min(limit, model->max_target_positions());
  return limit;
}

void ModelEnsemble::eval() const {
  for (EncoderDecoderModel* model : models_) model->eval();
}

ModelEnsemble::State ModelEnsemble::start(const Tensor& src_tokens) const {
  State state;
  for (EncoderDecoderModel* model : models_) state.push_back(model->init_decoder_state(model->encode(src_tokens)));
  return state;
}

Tensor ModelEnsemble::decode_step(const Tensor& tokens, State& state, Tensor* cross_attention, Tensor* features,
                                  double temperature) const {
  ATTN_CHECK(temperature > 0.0, "search: the temperature must be positive, got {}", temperature);
  // log_softmax(logits / T) from log p = logits − logsumexp(logits): the constant cancels.
  const auto tempered = [temperature](Tensor log_probs) {
    return temperature == 1.0 ? log_probs : ops::log_softmax(log_probs / temperature, -1);
  };
  if (models_.size() == 1)
    return tempered(models_.front()->decode_step(tokens, state.front(), cross_attention, features));
  std::vector<Tensor> log_probs, attentions;
  for (size_t m = 0; m < models_.size(); ++m) {
    Tensor attention;
    log_probs.push_back(tempered(models_[m]->decode_step(tokens, state[m], cross_attention ? &attention : nullptr,
                                                         m == 0 ? features : nullptr)));
    if (cross_attention) attentions.push_back(attention);
  }
  if (cross_attention) *cross_attention = ops::mean(ops::stack(attentions, 0), {0});
  return log_mean_exp(log_probs);
}

Tensor ModelEnsemble::target_log_probs(const Tensor& src_tokens, const Tensor& prev_output_tokens,
                                       const Tensor& target_tokens, Tensor* cross_attention) const {
  std::vector<Tensor> log_probs, attentions;
  for (EncoderDecoderModel* model : models_) {
    AttentionMaps maps;
    const Tensor logits = model->forward(src_tokens, prev_output_tokens, cross_attention ? &maps : nullptr);
    log_probs.push_back(ops::sub(ops::gather_last(logits, target_tokens), ops::logsumexp(logits, {-1})));
    if (cross_attention) attentions.push_back(ops::mean(maps.cross.back(), {1}));
  }
  if (models_.size() == 1) {
    if (cross_attention) *cross_attention = attentions.front();
    return log_probs.front();
  }
  if (cross_attention) *cross_attention = ops::mean(ops::stack(attentions, 0), {0});
  return log_mean_exp(log_probs);
}

void ModelEnsemble::reorder(State& state, const Tensor& order) const {
  for (size_t m = 0; m < models_.size(); ++m) models_[m]->reorder(state[m], order);
}

}  // namespace attn::nn
