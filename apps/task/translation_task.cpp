// Data dir + dictionaries + model of a translation run. See translation_task.hpp.
#include "apps/task/translation_task.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/core.h>

#include "apps/training/checkpoint.hpp"

namespace attn::app {
namespace fs = std::filesystem;
namespace {

// (source, target) pairs named by train.SRC-TGT.LANG.bin files (or raw text, train.SRC-TGT.LANG) in the folder.
std::set<std::pair<std::string, std::string>> binarized_pairs(const std::string& data_dir) {
  static const std::regex pattern(R"(train\.([^.\-]+)-([^.\-]+)\.[^.]+(\.bin)?)");  // binarized, or raw text
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& entry : fs::directory_iterator(data_dir)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, match, pattern)) pairs.emplace(match[1].str(), match[2].str());
  }
  return pairs;
}

}  // namespace

TranslationTask open_translation_task(const std::string& data_dir, const std::string& source_lang,
                                      const std::string& target_lang) {
  if (!fs::exists(data_dir)) throw Error(fmt::format("data dir {} does not exist", data_dir));
  if (!fs::is_directory(data_dir))
    throw Error(
        fmt::format("data dir {} is a file, not a folder (give the folder `attnlab preprocess` wrote)", data_dir));
  TranslationTask task;
  task.data_dir = fs::absolute(data_dir).lexically_normal().string();
  task.source_lang = source_lang;
  task.target_lang = target_lang;
  if (source_lang.empty() || target_lang.empty()) {
    const auto pairs = binarized_pairs(data_dir);
    if (pairs.size() != 1)
      throw Error(fmt::format("{}: cannot infer the language pair ({} train.SRC-TGT.* pairs found); pass "
                              "--source-lang and --target-lang",
                              data_dir, pairs.size()));
    if (task.source_lang.empty()) task.source_lang = pairs.begin()->first;
    if (task.target_lang.empty()) task.target_lang = pairs.begin()->second;
  }
  task.source_dict_path = (fs::path(task.data_dir) / data::dictionary_file_name(task.source_lang)).string();
  task.target_dict_path = (fs::path(task.data_dir) / data::dictionary_file_name(task.target_lang)).string();
  task.source_dict = data::Dictionary::load(task.source_dict_path);
  task.target_dict = data::Dictionary::load(task.target_dict_path);
  return task;
}

namespace {

// The language pair a split's files are named by: SRC-TGT, or TGT-SRC in a data dir binarized
// for the other direction (fairseq looks for both); none when neither is there.
std::optional<std::pair<std::string, std::string>> split_direction(const TranslationTask& task,
                                                                   const std::string& split) {
  for (const auto& pair :
       {std::pair{task.source_lang, task.target_lang}, std::pair{task.target_lang, task.source_lang}})
    if (fs::exists(data::binarized_path(task.data_dir, split, pair.first, pair.second, task.source_lang)) ||
        fs::exists(data::raw_text_path(task.data_dir, split, pair.first, pair.second, task.source_lang)))
      return pair;
  return std::nullopt;
}

// One split's binarized source and target (SPLIT.SRC-TGT.LANG.bin, or SPLIT.TGT-SRC.LANG.bin), or
// their text (SPLIT.SRC-TGT.LANG: fairseq's --dataset-impl raw); no target where the split has
// none (preprocess --only-source) and `sides` allows it.
std::pair<data::BinarizedCorpus, std::optional<data::BinarizedCorpus>> open_split_pair(const TranslationTask& task,
                                                                                       const std::string& split,
                                                                                       SplitSides sides) {
  // Neither there: the error of opening SRC-TGT's names the file looked for.
  const std::pair<std::string, std::string> direction =
      split_direction(task, split).value_or(std::pair{task.source_lang, task.target_lang});
  // Ids were checked against the file's own dictionary size. Another size, or the same size
  // with other symbols or another order (the fingerprint), means the file was made with
  // another dictionary, and its ids would name other words. fairseq's files record neither:
  // all that can be checked is that every id names an entry of the dictionary.
  auto open = [&](const std::string& lang, const data::Dictionary& dictionary, const std::string& dictionary_path) {
    // fairseq's raw dataset, the text beside the dictionaries, is read first where it is there.
    const std::string text = data::raw_text_path(task.data_dir, split, direction.first, direction.second, lang);
    if (fs::is_regular_file(text)) return data::BinarizedCorpus::from_text(text, dictionary);
    data::BinarizedCorpus corpus = data::BinarizedCorpus::open(
        data::binarized_path(task.data_dir, split, direction.first, direction.second, lang));
    if (!corpus.dictionary_size()) {
      if (corpus.max_id() >= int64_t(dictionary.size()))
        throw Error(fmt::format("{} holds id {} but {} has only {} symbols (ids 0 to {}): the file was made with "
                                "another dictionary",
                                corpus.path(), corpus.max_id(), dictionary_path, dictionary.size(),
                                dictionary.size() - 1));
      return corpus;
    }
    if (corpus.dictionary_size() != dictionary.size())
      throw Error(fmt::format("{} was made with a dictionary of {} symbols but {} has {}; run preprocess again",
                              corpus.path(), *corpus.dictionary_size(), dictionary_path, dictionary.size()));
    if (corpus.dictionary_fingerprint() && *corpus.dictionary_fingerprint() != dictionary.fingerprint())
      throw Error(fmt::format("{} was made with another dictionary than {} (same size, other symbols or another "
                              "order: was it edited after preprocess?); run preprocess again",
                              corpus.path(), dictionary_path));
    return corpus;
  };
  data::BinarizedCorpus source = open(task.source_lang, task.source_dict, task.source_dict_path);
  const std::string target_file =
      data::binarized_path(task.data_dir, split, direction.first, direction.second, task.target_lang);
  if (!fs::exists(target_file) &&
      !fs::exists(data::raw_text_path(task.data_dir, split, direction.first, direction.second, task.target_lang))) {
    ATTN_CHECK(sides == SplitSides::kSourceAlone,
               "{}: there is no {} (nor its text): the split has only its source side (preprocess --only-source), "
               "which generate translates but nothing can be trained or scored on",
               source.path(), target_file);
    return {std::move(source), std::nullopt};
  }
  data::BinarizedCorpus target = open(task.target_lang, task.target_dict, task.target_dict_path);
  if (source.size() != target.size())
    throw Error(
        fmt::format("{} has {} sentences but {} has {}", source.path(), source.size(), target.path(), target.size()));
  return {std::move(source), std::move(target)};
}

}  // namespace

SplitCorpora open_split(const TranslationTask& task, const std::string& split, const SplitCombination& combination) {
  ATTN_CHECK(combination.upsample_primary >= 1, "--upsample-primary must be >= 1, got {}",
             combination.upsample_primary);
  std::vector<data::BinarizedCorpus> sources, targets;
  for (size_t k = 0;; ++k) {
    const std::string part = k == 0 ? split : split + std::to_string(k);
    if (k > 0 && !split_direction(task, part)) break;  // fairseq stops at the first SPLITk not there
    auto [source, target] = open_split_pair(task, part, SplitSides::kBoth);
    sources.push_back(std::move(source));
    targets.push_back(std::move(*target));
    if (!combination.combine) break;
  }
  const size_t repeats = sources.size() > 1 ? combination.upsample_primary : 1;  // fairseq's: only when combined
  return {data::ConcatenatedCorpus(std::move(sources), repeats), data::ConcatenatedCorpus(std::move(targets), repeats)};
}

SourceSplit open_source_split(const TranslationTask& task, const std::string& split) {
  auto [source, target] = open_split_pair(task, split, SplitSides::kSourceAlone);
  if (!target) return {data::ConcatenatedCorpus(std::move(source)), std::nullopt};
  return {data::ConcatenatedCorpus(std::move(source)), data::ConcatenatedCorpus(std::move(*target))};
}

std::vector<std::string> parse_split_list(const std::string& text, const std::string& flag) {
  std::vector<std::string> splits;
  std::istringstream in(text + ",");
  for (std::string name; std::getline(in, name, ',');) {
    ATTN_CHECK(!name.empty(), "{}: an empty split name in '{}' (give names such as valid,valid1)", flag, text);
    ATTN_CHECK(std::find(splits.begin(), splits.end(), name) == splits.end(), "{}: '{}' is named twice in '{}'",
               flag, name, text);
    splits.push_back(name);
  }
  return splits;
}

void set_vocabulary(nn::TransformerConfig& config, const TranslationTask& task) {
  // One embedding for both sides reads a target id as the source dictionary's: the target
  // dictionary must be the joined one, or its first entries (preprocess --target-first).
  if (config.share_all_embeddings)
    for (size_t id = 0; id < task.target_dict.size(); ++id)
      if (id >= task.source_dict.size() || task.source_dict.symbol(int32_t(id)) != task.target_dict.symbol(int32_t(id)))
        throw Error(fmt::format("--share-all-embeddings needs one dictionary for both languages, or a target "
                                "dictionary that is the first entries of the source's, but {} line {} is not {}'s "
                                "(preprocess with --joined-dictionary)",
                                task.target_dict_path, id + 1 - data::Dictionary::kNumSpecial, task.source_dict_path));
  config.src_vocab_size = int64_t(task.source_dict.size());
  config.tgt_vocab_size = int64_t(task.target_dict.size());
  config.padding_idx = data::Dictionary::kPad;
  config.eos_idx = data::Dictionary::kEos;
  config.unk_idx = data::Dictionary::kUnk;
}

nlohmann::json keep_task_beside(const TranslationTask& task, const std::string& save_dir) {
  nlohmann::json j = {
      {"data_dir", task.data_dir},
      {"source_lang", task.source_lang},
      {"target_lang", task.target_lang},
      {"source_dict", keep_file_beside(task.source_dict_path, save_dir, data::dictionary_file_name(task.source_lang))},
      {"target_dict", keep_file_beside(task.target_dict_path, save_dir, data::dictionary_file_name(task.target_lang))}};
  if (!task.bpe_codes.empty()) j["bpe_codes"] = keep_file_beside(task.bpe_codes, save_dir, kBpeCodesFileName);
  return j;
}

namespace {

// task[key] as a string; a missing key or another type is an error naming the key.
std::string task_string(const nlohmann::json& task, const char* key) {
  ATTN_CHECK(task.is_object() && task.contains(key) && task[key].is_string(), "key \"task.{}\" must be a string",
             key);
  return task[key].get<std::string>();
}

}  // namespace

TranslationTask task_from_json(const nlohmann::json& j, const std::string& base) {
  TranslationTask task;
  task.data_dir = task_string(j, "data_dir");
  task.source_lang = task_string(j, "source_lang");
  task.target_lang = task_string(j, "target_lang");
  task.source_dict_path = referenced_file(j.at("source_dict"), base, "source dictionary");
  task.target_dict_path = referenced_file(j.at("target_dict"), base, "target dictionary");
  task.source_dict = data::Dictionary::load(task.source_dict_path);
  task.target_dict = data::Dictionary::load(task.target_dict_path);
  if (j.contains("bpe_codes")) task.bpe_codes = referenced_file(j.at("bpe_codes"), base, "BPE codes");
  return task;
}

TrainedModel load_trained_model(const std::string& checkpoint_path, Device device) {
  const std::string base = checkpoint_base(checkpoint_path);
  CheckpointContent content = load_checkpoint(base, /*with_optimizer=*/false);
  TrainedModel trained;
  trained.metadata = content.metadata;
  try {  // a metadata field missing or wrong, a dictionary gone, weights of another shape
    trained.task = task_from_json(content.metadata.at("task"), base);
    trained.model = std::make_shared<nn::EncoderDecoderModel>(nn::config_from_json(content.metadata.at("model_config")));
    trained.model->load_state_dict(std::map<std::string, Tensor>(content.model.begin(), content.model.end()));
  } catch (const std::exception& e) {
    throw CheckpointError(fmt::format("checkpoint {}: {}", metadata_path(base), e.what()));
  }
  trained.model->to(device);
  trained.model->eval();
  return trained;
}

namespace {

// `whose`: what `recorded` is ("which the model was trained with").
void check_same_dictionary(const std::string& given, const std::string& recorded, const std::string& whose) {
  if (file_checksum(given) != file_checksum(recorded))
    throw Error(fmt::format("dictionary {} differs from {}, {}", given, recorded, whose));
}

}  // namespace

std::vector<TrainedModel> load_trained_models(const std::string& checkpoint_paths, Device device) {
  std::vector<TrainedModel> trained;
  // getline gives no empty last piece for "A:", which must be refused as ":" and "A::B" are.
  if (checkpoint_paths.ends_with(':'))
    throw Error(fmt::format("--path '{}': an empty checkpoint name in the list", checkpoint_paths));
  std::stringstream list(checkpoint_paths);
  for (std::string path; std::getline(list, path, ':');) {
    if (path.empty())
      throw Error(fmt::format("--path '{}': an empty checkpoint name in the list", checkpoint_paths));
    trained.push_back(load_trained_model(path, device));
    const std::string whose = "the first checkpoint's: the models of an ensemble must share their dictionaries";
    check_same_dictionary(trained.back().task.source_dict_path, trained.front().task.source_dict_path, whose);
    check_same_dictionary(trained.back().task.target_dict_path, trained.front().task.target_dict_path, whose);
  }
  if (trained.empty()) throw Error("--path: no checkpoint given");
  return trained;
}

std::string first_checkpoint(const std::string& checkpoint_paths) {
  return checkpoint_paths.substr(0, checkpoint_paths.find(':'));
}

nn::ModelEnsemble ensemble_of(const std::vector<TrainedModel>& trained) {
  std::vector<nn::EncoderDecoderModel*> models;
  for (const TrainedModel& t : trained) models.push_back(t.model.get());
  return nn::ModelEnsemble(models);
}

TranslationTask open_task_for(const TrainedModel& trained, const std::string& data_dir) {
  TranslationTask data = open_translation_task(data_dir, trained.task.source_lang, trained.task.target_lang);
  const std::string whose = "which the model was trained with";
  check_same_dictionary(data.source_dict_path, trained.task.source_dict_path, whose);
  check_same_dictionary(data.target_dict_path, trained.task.target_dict_path, whose);
  return data;
}

}  // namespace attn::app
