// Converting a checkpoint to another architecture. See checkpoint_conversion.hpp.
#include "apps/training/checkpoint_conversion.hpp"

#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/core.h>

#include "apps/task/translation_task.hpp"
#include "apps/training/checkpoint.hpp"
#include "core/rng.hpp"

namespace attn::app {
namespace {

// The new model's configuration: the preset with the source's vocabulary, or the source's own.
nn::TransformerConfig target_config(const nn::TransformerConfig& source, const ConversionRequest& request) {
  nn::TransformerConfig target = source;
  if (!request.to_arch.empty()) {
    target = nn::transformer_preset(request.to_arch);
    target.src_vocab_size = source.src_vocab_size;
    target.tgt_vocab_size = source.tgt_vocab_size;
    target.padding_idx = source.padding_idx;
    target.eos_idx = source.eos_idx;
    target.share_all_embeddings = source.share_all_embeddings;
    target.share_decoder_input_output_embed = source.share_decoder_input_output_embed;
  }
  nn::apply_overrides(target, request.model_overrides);
  target.validate();
  for (auto [name, from, to] : {std::tuple{"encoder_attention_heads", source.encoder_attention_heads,
                                           target.encoder_attention_heads},
                                std::tuple{"decoder_attention_heads", source.decoder_attention_heads,
                                           target.decoder_attention_heads}})
    ATTN_CHECK(from == to,
               "convert: {} is {} in {} but {} in the new model; the projections' heads would be split differently",
               name, from, request.from, to);
  return target;
}

}  // namespace

ConversionResult convert_checkpoint(const ConversionRequest& request) {
  const std::string base = checkpoint_base(request.from), output = checkpoint_base(request.output);
  check_weights_only_output(output, "convert", {base});
  const CheckpointContent source = load_checkpoint(base, /*with_optimizer=*/false);
  ConversionResult result;
  TranslationTask task;
  try {
    result.source = nn::config_from_json(source.metadata.at("model_config"));
    task = task_from_json(source.metadata.at("task"), base);
  } catch (const std::exception& e) {
    throw CheckpointError(fmt::format("checkpoint {}: {}", metadata_path(base), e.what()));
  }
  result.target = target_config(result.source, request);
  manual_seed(request.seed);
  nn::EncoderDecoderModel model(result.target);
  result.transfer =
      nn::transfer_weights(std::map<std::string, Tensor>(source.model.begin(), source.model.end()), model);
  result.parameters = model.num_parameters();
  const nlohmann::json metadata = {
      {"model_config", nn::to_json(result.target)},
      {"task", keep_task_beside(task, std::filesystem::path(output).parent_path().string())},
      {"converted_from", {{"checkpoint", weights_path(base)}, {"checksum", file_checksum(weights_path(base))}}},
      {"conversion",
       {{"copied", result.transfer.copied}, {"added", result.transfer.added}, {"dropped", result.transfer.dropped}}}};
  save_checkpoint(output, {model.state_dict(), {}, metadata});
  return result;
}

}  // namespace attn::app
