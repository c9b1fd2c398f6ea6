// Capturing a model's attention on given sentences (`attnlab inspect`; docs/design.md §4): one
// forced-decoding forward pass in eval mode without gradients, the target fed as the decoder's
// input shifted right (</s> first, as fairseq), every mixer asked for its map (explicit for
// softmax attention, implied for the others: nn/mixers/token_mixer.hpp).
#pragma once
#include <string>
#include <vector>

#include "apps/task/translation_task.hpp"
#include "nn/transformer/attention_maps.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::app {

// The three places a model attends, by their names in files and reports.
inline constexpr const char* kPlaceNames[] = {"encoder_self", "decoder_self", "cross"};
// Their titles in figures and reports.
inline constexpr const char* kPlaceTitles[] = {"encoder self-attention", "decoder self-attention", "cross-attention"};
// The order in which reports show them: cross-attention first, as it shows what the model aligned.
inline constexpr int kReportPlaceOrder[] = {2, 0, 1};
// The per-layer maps of place i (0 encoder self, 1 decoder self, 2 cross).
const std::vector<Tensor>& place_maps(const nn::AttentionMaps& maps, int place);

// One sentence pair's maps, batch of one: [1, H, Tq, Tk] per layer and place, with the
// tokens on their axes.
struct SentenceAttention {
  std::vector<std::string> source;          // the source's subwords, </s> last
  std::vector<std::string> decoder_input;   // </s>, then the target without its </s>
  std::vector<std::string> decoder_output;  // the target's subwords, </s> last
  nn::AttentionMaps maps;
  // Query and key labels of a place.
  const std::vector<std::string>& queries(int place) const { return place == 0 ? source : decoder_output; }
  const std::vector<std::string>& keys(int place) const { return place == 1 ? decoder_input : source; }
};

// Throws attn::Error naming the place, layer and head (1-based) when one of `count` weights of
// a map is NaN or infinite: `whose` ("the model", "the teacher") has weights that give no map
// to draw or measure (a diverged or damaged checkpoint), as generate refuses its scores.
void check_weights_finite(const double* weights, size_t count, int place, size_t layer, int64_t head,
                          const std::string& whose);

// Source and target ids each end in </s>. Every weight of the maps is checked
// (check_weights_finite).
SentenceAttention capture_attention(nn::EncoderDecoderModel& model, const TranslationTask& task,
                                    const std::vector<int64_t>& source, const std::vector<int64_t>& target);

// The same from raw text: the sentence pair tokenized and BPE-encoded as the checkpoint's data
// was (apps/task/raw_text.hpp; the codes it recorded, or `codes` beside it). `command` names
// the caller in errors.
SentenceAttention capture_attention_of_text(TrainedModel& trained, const std::string& checkpoint,
                                            const std::string& source, const std::string& target,
                                            const std::string& command, bool tokenize = true);

// Runs the forward pass of a batch (on the model's device) with every map requested (eval
// mode, no gradients); the maps are returned in host memory, where the figures and
// statistics read them.
nn::AttentionMaps attention_of_batch(nn::EncoderDecoderModel& model, const Tensor& src_tokens,
                                     const Tensor& prev_output_tokens);

}  // namespace attn::app
