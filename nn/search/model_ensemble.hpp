// Several models searched as one (fairseq's `--path a.pt:b.pt`, docs/models.md §1.10.2): they
// read the same source and extend the same hypotheses, and each step's next-token
// distribution is the mean of their probabilities,
//   log p(y) = log (1/M · Σ_m p_m(y)) = logsumexp_m log p_m(y) − log M,
// the cross-attention the mean of theirs. kNN-MT queries with the first model's decoder state
// (its datastore holds that model's states). One model is an ensemble of one: the searches take
// a ModelEnsemble, and a model converts to it implicitly, its outputs passed through unchanged.
#pragma once
#include <vector>

#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::nn {

class ModelEnsemble {
 public:
  ModelEnsemble(EncoderDecoderModel& model);  // NOLINT(google-explicit-constructor): one model searches alone
  // Throws unless there is at least one model and all share vocabularies, pad and </s>.
  explicit ModelEnsemble(std::vector<EncoderDecoderModel*> models);

  // One decoder state per model, rows in the same order.
  using State = std::vector<DecoderState>;

  // The first model's configuration (vocabularies, pad and </s> are every model's).
  const TransformerConfig& config() const { return models_.front()->config(); }
  int64_t max_source_positions() const;  // the smallest of the models'
  int64_t max_target_positions() const;
  Device device() const { return models_.front()->device(); }
  size_t size() const { return models_.size(); }
  void eval() const;

  State start(const Tensor& src_tokens) const;  // every model encodes the source
  // As EncoderDecoderModel::decode_step, over the models (see above); features: the first model's.
  // temperature T ≠ 1: each model's log-probabilities are those of softmax(logits / T).
  Tensor decode_step(const Tensor& tokens, State& state, Tensor* cross_attention = nullptr,
                     Tensor* features = nullptr, double temperature = 1.0) const;
  void reorder(State& state, const Tensor& order) const;

  // Teacher-forced, as fairseq's SequenceScorer: the log-probabilities [B, T] of the target
  // tokens [B, T] (int64) from one full forward per model (the ensemble's as decode_step's),
  // each logit_y − logsumexp(logits), so that no [B, T, V] of log-probabilities is made beside
  // the logits; cross_attention (optional): the last layer's, head-averaged, [B, T, S]. A full
  // forward is what a model's training saw (a DynamicConv with fairseq's softmax span
  // renormalises over the padded length, which a step does not).
  Tensor target_log_probs(const Tensor& src_tokens, const Tensor& prev_output_tokens, const Tensor& target_tokens,
                          Tensor* cross_attention = nullptr) const;

 private:
  std::vector<EncoderDecoderModel*> models_;
};

}  // namespace attn::nn
