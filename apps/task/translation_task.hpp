// The translation task: what ties a preprocessed data dir (fairseq layout: dict.SRC.txt,
// dict.TGT.txt, SPLIT.SRC-TGT.LANG.bin; docs/mt-tools.md §4) to a model, for the trainer
// and the decoding commands. A checkpoint's metadata records the task ("task": data dir,
// languages, the dictionaries and optional BPE codes, copied into the save dir and named by
// checksummed references, apps/training/checkpoint.hpp) so that `validate`, `generate` and `translate`
// rebuild exactly the model and vocabularies it was trained with, wherever the data now is.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "data/concatenated_corpus.hpp"
#include "data/dictionary.hpp"
#include "nn/search/model_ensemble.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::app {

struct TranslationTask {
  std::string data_dir;
  std::string source_lang, target_lang;
  std::string source_dict_path, target_dict_path;
  data::Dictionary source_dict, target_dict;
  std::string bpe_codes;  // optional: BPE codes used on the raw text (for `translate`)
};

// Opens DATA_DIR's dictionaries. Languages left empty are inferred from the single
// `train.SRC-TGT.SRC.bin` (or dict.*.txt pair) in the folder; ambiguity is an error.
TranslationTask open_translation_task(const std::string& data_dir, const std::string& source_lang = "",
                                      const std::string& target_lang = "");

// The binarized source and target of a split ("train", "valid", "test").
struct SplitCorpora {
  data::ConcatenatedCorpus source, target;
};
// "valid,valid1" -> {valid, valid1} (fairseq's --valid-subset); an empty name or one given
// twice is an error naming `flag`.
std::vector<std::string> parse_split_list(const std::string& text, const std::string& flag);

// How a split is read: alone, or (combine, fairseq's for the training split) followed by
// SPLIT1, SPLIT2, ... as long as the data dir holds them, the first, the primary, repeated
// upsample_primary times when there are others (data/concatenated_corpus.hpp).
struct SplitCombination {
  bool combine = false;
  size_t upsample_primary = 1;
};
SplitCorpora open_split(const TranslationTask& task, const std::string& split,
                        const SplitCombination& combination = {});

// Whether a split must have both sides (training, scoring) or may have its source alone.
enum class SplitSides { kBoth, kSourceAlone };
// A split to translate: its source, and its target when it has one (fairseq-preprocess
// --only-source binarizes the source alone, as fairseq's back-translation recipe does for
// monolingual text; fairseq-generate then prints no references and no BLEU).
struct SourceSplit {
  data::ConcatenatedCorpus source;
  std::optional<data::ConcatenatedCorpus> target;
};
SourceSplit open_source_split(const TranslationTask& task, const std::string& split);

// The model configuration for the task's dictionaries: vocabulary sizes, pad and eos.
void set_vocabulary(nn::TransformerConfig& config, const TranslationTask& task);

// fairseq's name of the BPE codes in a model archive, which checkpoints keep beside them too.
inline constexpr const char* kBpeCodesFileName = "bpecodes";

// Copies the task's dictionaries (as dict.SRC.txt, dict.TGT.txt) and BPE codes (as bpecodes)
// into save_dir (keep_file_beside) and returns the task as its checkpoints record it:
// {"data_dir", "source_lang", "target_lang", "source_dict": reference, "target_dict": …, "bpe_codes": …}
nlohmann::json keep_task_beside(const TranslationTask& task, const std::string& save_dir);
// Reopens the task that checkpoint `base` recorded: its files are looked up beside the
// checkpoint (else at their recorded paths) and must have the recorded checksums.
TranslationTask task_from_json(const nlohmann::json& j, const std::string& base);

// A trained model loaded from a checkpoint for evaluation (eval mode) with its task.
struct TrainedModel {
  std::shared_ptr<nn::EncoderDecoderModel> model;
  TranslationTask task;
  nlohmann::json metadata;
};
// The model is moved to `device` (use_device() must have switched it on).
TrainedModel load_trained_model(const std::string& checkpoint_path, Device device);
// `--path A:B:C`, fairseq's ensembles: every checkpoint of the colon-separated list, in order;
// throws unless all recorded the same dictionaries, byte for byte.
std::vector<TrainedModel> load_trained_models(const std::string& checkpoint_paths, Device device);
// The first checkpoint of such a list (where files beside the checkpoint are looked for).
std::string first_checkpoint(const std::string& checkpoint_paths);
// The models of `trained` searched as one (nn/search/model_ensemble.hpp).
nn::ModelEnsemble ensemble_of(const std::vector<TrainedModel>& trained);

// DATA_DIR opened for the languages `trained` was trained on (validate, generate); throws when
// its dictionaries are not, byte for byte, those the model recorded.
TranslationTask open_task_for(const TrainedModel& trained, const std::string& data_dir);

}  // namespace attn::app
