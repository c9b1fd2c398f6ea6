// Training checkpoints: verified tensor files + JSON metadata, rotation. See checkpoint.hpp.
#include "apps/training/checkpoint.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "apps/training/save_dir_lock.hpp"
#include "core/checksum.hpp"
#include "data/text_io.hpp"
#include "nn/checkpoint_average.hpp"
#include "nn/checkpoint_names.hpp"

namespace attn::app {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "attnlab-checkpoint-1";

// Runs data's file reading (data/text_io.hpp: a folder is refused, not read as an empty file),
// its errors as CheckpointErrors, so that a resume goes on to an older checkpoint.
template <typename Read>
auto as_checkpoint_error(Read read) {
  try {
    return read();
  } catch (const data::DataError& e) {
    throw CheckpointError(e.what());
  }
}

std::ifstream open_checkpoint_file(const std::string& path) {
  return as_checkpoint_error([&] { return data::open_input_file(path); });
}

void check_checkpoint_read(const std::ifstream& in, const std::string& path) {
  as_checkpoint_error([&] { data::check_read(in, path); });
}

std::string read_file_bytes(const std::string& path) {
  return as_checkpoint_error([&] { return data::read_file_bytes(path); });
}

// {"file": name relative to the save dir, "bytes": size, "checksum": ...} of file `path`,
// whose bytes are in `written` (itself, or the temp file that stages it).
nlohmann::json describe_file(const std::string& written, const std::string& path) {
  return {{"file", fs::path(path).filename().string()},
          {"bytes", uint64_t(fs::file_size(written))},
          {"checksum", file_checksum(written)}};
}

// The path of a file the JSON describes, after checking its size and checksum.
std::string verified_file(const std::string& base, const nlohmann::json& description, const char* role) {
  const std::string path = (fs::path(base).parent_path() / description.at("file").get<std::string>()).string();
  const std::string json_path = metadata_path(base);
  if (!fs::exists(path))
    throw CheckpointError(fmt::format("checkpoint {}: its {} file {} is missing{}", json_path, role, path,
                                      std::string(role) == "optimizer"
                                          ? " (to continue from its weights only, pass --reset-optimizer)"
                                          : ""));
  if (fs::is_directory(path))
    throw CheckpointError(fmt::format("checkpoint {}: its {} file {} is a folder, not a file", json_path, role, path));
  const uint64_t expected_bytes = description.at("bytes").get<uint64_t>();
  const uint64_t bytes = fs::file_size(path);
  if (bytes != expected_bytes)
    throw CheckpointError(fmt::format("checkpoint {}: {} has {} bytes but the checkpoint recorded {} (truncated or "
                                      "torn checkpoint)",
                                      json_path, path, bytes, expected_bytes));
  const std::string checksum = file_checksum(path);
  if (checksum != description.at("checksum").get<std::string>())
    throw CheckpointError(fmt::format("checkpoint {}: {} has checksum {} but the checkpoint recorded {} (torn or "
                                      "modified checkpoint)",
                                      json_path, path, checksum, description.at("checksum").get<std::string>()));
  return path;
}

// The "files" record: {"weights": description, optionally "optimizer": description}, each
// {"file": string, "bytes": unsigned, "checksum": string}; a wrong type names the key.
void check_files_record(const nlohmann::json& files, const std::string& json_path) {
  auto fail = [&](const std::string& key, const char* expected) {
    throw CheckpointError(fmt::format("checkpoint {}: key \"{}\" must be {}", json_path, key, expected));
  };
  if (!files.is_object() || !files.contains("weights")) fail("files", "an object with \"weights\"");
  for (const auto& [role, description] : files.items()) {
    const std::string key = "files." + role;
    if (role != "weights" && role != "optimizer") fail(key, "absent (only \"weights\" and \"optimizer\")");
    if (!description.is_object()) fail(key, "an object");
    if (!description.contains("file") || !description["file"].is_string()) fail(key + ".file", "a string");
    if (!description.contains("bytes") || !description["bytes"].is_number_unsigned()) fail(key + ".bytes", "a size >= 0");
    if (!description.contains("checksum") || !description["checksum"].is_string()) fail(key + ".checksum", "a string");
  }
}

// The checkpoints in `folder` (NAME.json beside NAME.safetensors), by name.
std::vector<std::string> checkpoints_in(const fs::path& folder) {
  std::vector<std::string> names;
  std::error_code unreadable;
  for (const auto& entry : fs::directory_iterator(folder, unreadable)) {
    const fs::path path = entry.path();
    if (path.extension() == ".json" && fs::exists(weights_path(checkpoint_base(path.string()))))
      names.push_back(path.stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A path that names no checkpoint: what was looked for and, since a fairseq user types
// checkpoint_best.pt or the save dir itself, the checkpoints the folder does hold.
[[noreturn]] void no_checkpoint(const std::string& base) {
  if (base.empty())
    throw CheckpointError("a checkpoint path is empty (give NAME, NAME.safetensors or NAME.json)");
  constexpr size_t kNamesShown = 8;
  const fs::path named(base);
  const bool is_folder = fs::is_directory(named);
  const fs::path folder = is_folder ? named : named.has_parent_path() ? named.parent_path() : fs::path(".");
  std::string problem = is_folder ? "is a folder, not a checkpoint"
                                  : fmt::format("no such checkpoint ({} does not exist)", metadata_path(base));
  std::vector<std::string> held = checkpoints_in(folder);
  if (!held.empty()) {
    const size_t all = held.size();
    if (all > kNamesShown) held.resize(kNamesShown);
    problem += fmt::format("; {} holds {}{}", folder.string(), fmt::join(held, ", "),
                           all > kNamesShown ? fmt::format(", ... ({} in all)", all) : "");
  }
  throw CheckpointError(fmt::format("checkpoint {}: {}", base, problem));
}

nlohmann::json read_metadata_json(const std::string& base) {
  const std::string path = metadata_path(base);
  if (!fs::exists(path)) no_checkpoint(base);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file_bytes(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw CheckpointError(fmt::format("checkpoint {}: not valid JSON (truncated?): {}", path, e.what()));
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat || !j.contains("files") ||
      !j.contains("metadata"))
    throw CheckpointError(fmt::format("checkpoint {}: not an attnlab checkpoint (expected \"format\": \"{}\")", path,
                                      kFormat));
  check_files_record(j["files"], path);
  if (!j["metadata"].is_object())
    throw CheckpointError(fmt::format("checkpoint {}: key \"metadata\" must be an object", path));
  return j;
}

NamedTensors load_tensors(const std::string& path) {
  try {
    return load_safetensors(path).tensors;
  } catch (const Error& e) {
    throw CheckpointError(e.what());
  }
}

// Removes all but the `keep` highest-numbered checkpoints named by `numbering`.
// Removes all but the newest `keep` checkpoints of a numbering (keep <= 0: none, as fairseq
// rotates only for N > 0), leaving aside those whose number is a multiple of `kept_multiple`
// (> 0; fairseq's --keep-interval-updates-pattern: they are neither removed nor counted).
void keep_newest(const std::string& save_dir, nn::CheckpointNumbering numbering, int64_t keep,
                 int64_t kept_multiple = -1) {
  if (keep <= 0) return;
  std::vector<nn::NumberedCheckpoint> found = nn::numbered_checkpoints(save_dir, numbering, ".json");
  if (kept_multiple > 0)
    std::erase_if(found, [&](const nn::NumberedCheckpoint& c) { return c.number % kept_multiple == 0; });
  for (size_t i = size_t(keep); i < found.size(); ++i) remove_checkpoint(checkpoint_base(found[i].path));
}

// The save dir's checkpoint.best_<policy's metric>_* (their bases), best score first; of equal
// (rounded) scores, the later save first.
std::vector<std::string> best_checkpoints_best_first(const std::string& save_dir, const CheckpointPolicy& policy) {
  std::vector<std::pair<nn::BestCheckpointName, std::string>> found;
  for (const auto& entry : fs::directory_iterator(save_dir)) {
    if (entry.path().extension() != ".json") continue;
    const std::optional<nn::BestCheckpointName> name = nn::parse_best_checkpoint_name(entry.path().stem().string());
    if (name && name->metric == policy.best_metric) found.emplace_back(*name, checkpoint_base(entry.path().string()));
  }
  std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    if (a.first.score != b.first.score)
      return policy.maximize_best_metric ? a.first.score > b.first.score : a.first.score < b.first.score;
    return a.first.updates > b.first.updates;
  });
  std::vector<std::string> bases;
  for (const auto& [name, base] : found) bases.push_back(base);
  return bases;
}

// Whether a save scoring `score` belongs among the --keep-best-checkpoints: fewer are kept, or
// it beats the worst of them (as the names round it).
bool ranks_among_best(const std::string& save_dir, double score, const CheckpointPolicy& policy) {
  const std::vector<std::string> kept = best_checkpoints_best_first(save_dir, policy);
  if (int64_t(kept.size()) < policy.keep_best_checkpoints) return true;
  const double worst = nn::parse_best_checkpoint_name(fs::path(kept.back()).filename().string())->score;
  const double rounded = nn::parse_best_checkpoint_name(nn::best_checkpoint_name(policy.best_metric, score, 0))->score;
  return policy.maximize_best_metric ? rounded > worst : rounded < worst;
}

// Removes the epoch, update and best-score checkpoints the policy no longer keeps.
void remove_rotated_out(const std::string& save_dir, const CheckpointPolicy& policy) {
  keep_newest(save_dir, nn::CheckpointNumbering::Epoch, policy.keep_last_epochs);
  keep_newest(save_dir, nn::CheckpointNumbering::Update, policy.keep_interval_updates,
              policy.keep_interval_updates_pattern);
  if (policy.keep_best_checkpoints <= 0) return;
  const std::vector<std::string> best = best_checkpoints_best_first(save_dir, policy);
  for (size_t i = size_t(policy.keep_best_checkpoints); i < best.size(); ++i) remove_checkpoint(best[i]);
}

std::string format_checksum(uint64_t hash) { return fmt::format("fnv1a64:{:016x}", hash); }

std::string folder_of(const std::string& base) { return fs::path(base).parent_path().string(); }

bool is_file_reference(const nlohmann::json& j) {
  return j.is_object() && j.contains("checksum") && (j.contains("file") || j.contains("path"));
}

// `value` (named `key`, in the metadata of checkpoint `from_base`) with every file reference in
// it copied beside checkpoint `to_base`.
nlohmann::json carry_references(const nlohmann::json& value, const std::string& key, const std::string& from_base,
                                const std::string& to_base) {
  if (is_file_reference(value)) {
    const std::string recorded = (value.contains("file") ? value.at("file") : value.at("path")).get<std::string>();
    try {
      return keep_file_beside(referenced_file(value, from_base, key), folder_of(to_base),
                              fs::path(recorded).filename().string());
    } catch (const CheckpointError& e) {
      throw CheckpointError(fmt::format("checkpoint {}: {}", metadata_path(from_base), e.what()));
    }
  }
  if (!value.is_object()) return value;
  nlohmann::json carried = value;
  for (auto& [name, part] : carried.items()) part = carry_references(part, name, from_base, to_base);
  return carried;
}

// Whether checkpoint `base` is intact and holds the same state as the checkpoint whose JSON is
// `record` (same metadata, tensor files with the same checksums).
bool holds_same_checkpoint(const std::string& base, const nlohmann::json& record) {
  try {
    const nlohmann::json mine = read_metadata_json(base);
    if (mine.at("metadata") != record.at("metadata")) return false;
    const nlohmann::json &my_files = mine.at("files"), &files = record.at("files");
    if (my_files.size() != files.size()) return false;
    for (const auto& [role, description] : files.items())
      if (!my_files.contains(role) || my_files[role].at("checksum") != description.at("checksum")) return false;
    for (const auto& [role, description] : my_files.items()) verified_file(base, description, role.c_str());
    return true;
  } catch (const std::exception&) {
    return false;  // missing, torn or unreadable: rewritten
  }
}

// `to` (a new temp file) with the content of `from`: a hard link to it where the file system
// allows, a copy where not. A link is safe because no checkpoint file is ever changed in
// place: every save writes a temp file and renames it over the old name, which leaves the
// other names of the old file as they were. It spares writing (and holding on disk) a second
// and third copy of the weights and optimizer state for checkpoint_last and checkpoint_best.
void link_or_copy(const std::string& from, const std::string& to) {
  std::error_code not_linked;
  fs::create_hard_link(from, to, not_linked);
  if (!not_linked) return;
  std::error_code not_copied;
  fs::copy_file(from, to, not_copied);
  if (not_copied)
    throw CheckpointError(fmt::format("cannot copy {} to {}: {}", from, to, not_copied.message()));
}

// ATTNLAB_TEST_SAVE_PAUSE_MS=N makes every step of a save wait N ms, so that the
// kill-and-resume test (tests/apps/test_kill_resume.cpp) lands its kills inside saves.
void pause_inside_save_for_tests() {
  static const int milliseconds = [] {
    const char* value = std::getenv("ATTNLAB_TEST_SAVE_PAUSE_MS");
    return value ? std::atoi(value) : 0;
  }();
  if (milliseconds > 0) std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
}

// Runs `read`, turning a JSON key missing or of the wrong type (nlohmann's bare
// "[json.exception.type_error.302] ...") into a CheckpointError naming the checkpoint's JSON.
template <typename Read>
auto with_json_errors_named(const std::string& base, Read read) {
  try {
    return read();
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(fmt::format("checkpoint {}: unexpected content: {}", metadata_path(base), e.what()));
  }
}

// The leaves of a JSON value by dotted path ("model_config.mixer_options.weight_dropout").
void collect_leaves(const nlohmann::json& value, const std::string& path,
                    std::map<std::string, nlohmann::json>& leaves) {
  if (!value.is_object()) {
    leaves[path] = value;
    return;
  }
  for (const auto& [key, part] : value.items()) collect_leaves(part, path + "." + key, leaves);
}

// Why a checkpoint cannot be averaged with the first: the files of their data differ (row i of
// an embedding is symbol i of one dictionary), or their models do apart from the dropouts
// (weights fine-tuned with other dropouts from one start may be averaged). The model configs
// are compared as JSON: averaging needs only the weights, not a config that builds a model.
// Empty when none.
std::vector<std::string> averaging_conflicts(const nlohmann::json& first, const nlohmann::json& other) {
  std::vector<std::string> conflicts;
  auto checksum_of = [](const nlohmann::json& metadata, const char* file) {
    const nlohmann::json task = metadata.value("task", nlohmann::json::object());
    return task.contains(file) && task[file].is_object() ? task[file].value("checksum", "") : "";
  };
  for (const char* file : {"bpe_codes", "source_dict", "target_dict"})
    if (checksum_of(first, file) != checksum_of(other, file)) conflicts.push_back(file);
  std::map<std::string, nlohmann::json> first_fields, other_fields;
  collect_leaves(first.value("model_config", nlohmann::json::object()), "model_config", first_fields);
  collect_leaves(other.value("model_config", nlohmann::json::object()), "model_config", other_fields);
  std::set<std::string> paths;  // of either
  for (const auto* fields : {&first_fields, &other_fields})
    for (const auto& [path, value] : *fields) paths.insert(path);
  auto at = [](const std::map<std::string, nlohmann::json>& fields, const std::string& path) {
    const auto found = fields.find(path);
    return found == fields.end() ? nlohmann::json() : found->second;
  };
  for (const std::string& path : paths)
    if (!path.ends_with("dropout") && at(first_fields, path) != at(other_fields, path)) conflicts.push_back(path);
  return conflicts;
}

}  // namespace

std::string checkpoint_base(const std::string& path) {
  for (const char* extension : {".optimizer.safetensors", ".safetensors", ".json"})
    if (path.ends_with(extension)) return path.substr(0, path.size() - std::string(extension).size());
  return path;
}
std::string weights_path(const std::string& base) { return base + ".safetensors"; }
std::string optimizer_path(const std::string& base) { return base + ".optimizer.safetensors"; }
std::string metadata_path(const std::string& base) { return base + ".json"; }
bool checkpoint_exists(const std::string& base) { return fs::exists(metadata_path(base)); }

std::string file_checksum(const std::string& path) {
  std::ifstream in = open_checkpoint_file(path);
  uint64_t hash = kFnv1a64OffsetBasis;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), std::streamsize(buffer.size()));
    hash = fnv1a64(hash, buffer.data(), size_t(in.gcount()));
  }
  check_checkpoint_read(in, path);
  return format_checksum(hash);
}

void save_checkpoint(const std::string& base, const CheckpointContent& content) {
  ATTN_CHECK(content.metadata.is_object(), "checkpoint {}: metadata must be a JSON object", base);
  data::create_folders(fs::path(base).parent_path().string(), "the checkpoint's folder");
  // Every file staged before any is renamed into place, the JSON last: a failed write (a full
  // disk) leaves the checkpoint of that name as it was.
  data::OutputFiles outputs;
  nlohmann::json files;
  auto stage_tensors = [&](const char* role, const std::string& path, const NamedTensors& tensors) {
    outputs.add_written(path, [&](const std::string& temp) {
      write_safetensors_file(temp, tensors);
      files[role] = describe_file(temp, path);
    });
    pause_inside_save_for_tests();
  };
  stage_tensors("weights", weights_path(base), content.model);
  if (!content.optimizer.empty()) stage_tensors("optimizer", optimizer_path(base), content.optimizer);
  const nlohmann::json j = {{"format", kFormat}, {"files", files}, {"metadata", content.metadata}};
  outputs.add(metadata_path(base), j.dump(2) + "\n");
  outputs.commit();
  if (content.optimizer.empty()) fs::remove(optimizer_path(base));
}

nlohmann::json load_checkpoint_metadata(const std::string& path, bool with_optimizer) {
  const std::string base = checkpoint_base(path);
  return with_json_errors_named(base, [&] {
    const nlohmann::json j = read_metadata_json(base);
    for (const auto& [role, description] : j.at("files").items())
      if (with_optimizer || role != "optimizer") verified_file(base, description, role.c_str());
    return j.at("metadata");
  });
}

CheckpointContent load_checkpoint(const std::string& path, bool with_optimizer) {
  const std::string base = checkpoint_base(path);
  return with_json_errors_named(base, [&] {
    const nlohmann::json j = read_metadata_json(base);
    const nlohmann::json& files = j.at("files");
    CheckpointContent content;
    content.metadata = j.at("metadata");
    content.model = load_tensors(verified_file(base, files.at("weights"), "weights"));
    if (with_optimizer && files.contains("optimizer"))
      content.optimizer = load_tensors(verified_file(base, files.at("optimizer"), "optimizer"));
    return content;
  });
}

void copy_checkpoint(const std::string& from_base, const std::string& to_base) {
  nlohmann::json j = read_metadata_json(from_base);
  data::OutputFiles outputs;  // as in save_checkpoint: all staged, then renamed, the JSON last
  for (auto& [role, description] : j.at("files").items()) {
    const std::string from = verified_file(from_base, description, role.c_str());
    const std::string to = role == "weights" ? weights_path(to_base) : optimizer_path(to_base);
    outputs.add_written(to, [&](const std::string& temp) { link_or_copy(from, temp); });
    description["file"] = fs::path(to).filename().string();
  }
  outputs.add(metadata_path(to_base), j.dump(2) + "\n");
  outputs.commit();
  if (!j.at("files").contains("optimizer")) fs::remove(optimizer_path(to_base));
}

void remove_checkpoint(const std::string& base) {
  // The JSON first: a half-removed checkpoint is never mistaken for a complete one.
  fs::remove(metadata_path(base));
  fs::remove(weights_path(base));
  fs::remove(optimizer_path(base));
}

void check_weights_only_output(const std::string& output, const std::string& command,
                               const std::vector<std::string>& inputs) {
  const std::string base = checkpoint_base(output), optimizer = optimizer_path(base);
  if (fs::path(base).filename().empty())
    throw CheckpointError(fmt::format("{}: --output '{}' names no checkpoint (give NAME or DIR/NAME)", command, output));
  if (fs::exists(optimizer))
    throw CheckpointError(fmt::format("{}: {} is a checkpoint of a training run: writing it would delete its "
                                      "optimizer state {}, which resuming the run needs; choose another --output",
                                      command, base, optimizer));
  const std::string folder = folder_of(base);
  if (const std::optional<std::string> owner = running_training(folder))
    throw CheckpointError(fmt::format("{}: {} is in the save dir of a training run that is running now ({}); choose "
                                      "another --output, or wait for the run to end",
                                      command, base, *owner));
  for (const std::string& input : inputs)
    for (const auto& file_of : {weights_path, metadata_path})
      data::refuse_output_over_input(file_of(base), file_of(checkpoint_base(input)),
                                     fmt::format("an input of {}", command));
}

void average_checkpoints_into(const std::vector<std::string>& bases, const std::string& output) {
  ATTN_CHECK(!bases.empty(), "average: no checkpoints given");
  check_weights_only_output(output, "average", bases);
  // Loading verifies the weights before averaging them.
  const nlohmann::json first_metadata = load_checkpoint_metadata(bases.front(), /*with_optimizer=*/false);
  std::vector<std::string> weights = {weights_path(bases.front())};
  for (size_t i = 1; i < bases.size(); ++i) {
    const nlohmann::json metadata = load_checkpoint_metadata(bases[i], /*with_optimizer=*/false);
    if (const std::vector<std::string> conflicts = averaging_conflicts(first_metadata, metadata);
        !conflicts.empty())
      throw CheckpointError(fmt::format("average: {} and {} differ in {} (checkpoints of other data or another model "
                                        "cannot be averaged)",
                                        bases.front(), bases[i], conflicts.front()));
    weights.push_back(weights_path(bases[i]));
  }
  SafetensorsFile averaged = nn::average_checkpoints(weights);
  const std::string first = checkpoint_base(bases.front()), output_base = checkpoint_base(output);
  const nlohmann::json metadata = carry_references(first_metadata, "metadata", first, output_base);
  save_checkpoint(output_base, {std::move(averaged.tensors), {}, metadata});
}

nlohmann::json keep_file_beside(const std::string& source, const std::string& dir, const std::string& name) {
  const std::string bytes = read_file_bytes(source);
  const std::string checksum = format_checksum(fnv1a64(bytes.data(), bytes.size()));
  const std::string copy = (fs::path(dir) / name).string();
  if (!fs::exists(copy)) {
    data::create_folders(dir, "the save dir");
    data::write_file_atomic(copy, bytes);
  } else if (file_checksum(copy) != checksum) {
    throw CheckpointError(fmt::format("cannot copy {} to {}: that file exists with other contents (checkpoints of "
                                      "other data in that folder?)",
                                      source, copy));
  }
  return {{"file", name}, {"path", fs::absolute(source).lexically_normal().string()}, {"checksum", checksum}};
}

std::string referenced_file(const nlohmann::json& reference, const std::string& base, const std::string& what) {
  auto is_string_at = [&](const char* key) { return reference.contains(key) && reference[key].is_string(); };
  if (!is_file_reference(reference) || !is_string_at("checksum") || (reference.contains("file") && !is_string_at("file")) ||
      (reference.contains("path") && !is_string_at("path")))
    throw CheckpointError(fmt::format("its {} must be recorded as {{\"file\": string, \"path\": string, \"checksum\": "
                                      "string}}, got {}",
                                      what, reference.dump()));
  std::vector<std::string> candidates;
  if (reference.contains("file"))
    candidates.push_back((fs::path(folder_of(base)) / reference.at("file").get<std::string>()).string());
  if (reference.contains("path")) candidates.push_back(reference.at("path").get<std::string>());
  const std::string recorded = reference.at("checksum").get<std::string>();
  for (const std::string& path : candidates) {
    if (!fs::exists(path)) continue;
    const std::string checksum = file_checksum(path);
    if (checksum != recorded)
      throw CheckpointError(fmt::format("its {} {} changed since it was recorded (checksum {} instead of {})", what,
                                        path, checksum, recorded));
    return path;
  }
  throw CheckpointError(fmt::format("its {} is missing (no file {})", what, fmt::join(candidates, " nor ")));
}

std::vector<std::string> checkpoint_names(const std::string& save_dir, const SaveRequest& request,
                                          const CheckpointPolicy& policy) {
  auto in_dir = [&](const std::string& name) { return (fs::path(save_dir) / name).string(); };
  std::vector<std::string> names;
  if (request.end_of_epoch && policy.save_epoch_checkpoints) names.push_back(in_dir(nn::epoch_checkpoint_name(request.epoch)));
  if (!request.end_of_epoch && policy.save_interval_updates > 0 && request.num_updates % policy.save_interval_updates == 0)
    names.push_back(in_dir(nn::update_checkpoint_name(request.epoch, request.num_updates)));
  if (request.is_best) names.push_back(in_dir("checkpoint_best"));
  if (policy.keep_best_checkpoints > 0 && request.score && ranks_among_best(save_dir, *request.score, policy))
    names.push_back(in_dir(nn::best_checkpoint_name(policy.best_metric, *request.score, request.num_updates)));
  if (policy.save_last) names.push_back(in_dir("checkpoint_last"));
  return names;
}

std::vector<std::string> save_rotating(const std::string& save_dir, const SaveRequest& request,
                                       const CheckpointPolicy& policy, const CheckpointContent& content) {
  data::create_folders(save_dir, "--save-dir");
  const std::vector<std::string> names = checkpoint_names(save_dir, request, policy);
  if (names.empty()) return names;  // --no-last-checkpoints, and no epoch, interval or best checkpoint due
  save_checkpoint(names.front(), content);
  for (size_t i = 1; i < names.size(); ++i) {
    pause_inside_save_for_tests();
    copy_checkpoint(names.front(), names[i]);
  }
  remove_rotated_out(save_dir, policy);
  return names;
}

bool is_checkpoint_name(const std::string& name) {
  return name == "checkpoint_last" || name == "checkpoint_best" ||
         nn::checkpoint_number(name, nn::CheckpointNumbering::Epoch) ||
         nn::checkpoint_number(name, nn::CheckpointNumbering::Update) || nn::parse_best_checkpoint_name(name);
}

std::vector<std::string> checkpoints_newest_first(const std::string& save_dir) {
  // Newest progress first; at equal progress by rank, then by name (descending).
  struct Candidate {
    CheckpointProgress progress;
    int rank;  // at equal progress: checkpoint_last (0), a numbered one (1), checkpoint_best and checkpoint.best_* (2)
    std::string base;
  };
  std::vector<Candidate> found;
  if (!fs::is_directory(save_dir)) return {};
  for (const auto& entry : fs::directory_iterator(save_dir)) {
    if (entry.path().extension() != ".json" || !is_checkpoint_name(entry.path().stem().string())) continue;
    const std::string base = checkpoint_base(entry.path().string());
    const std::string name = entry.path().stem().string();
    found.push_back({checkpoint_progress(base), name == "checkpoint_last"                                          ? 0
                        : name == "checkpoint_best" || nn::parse_best_checkpoint_name(name) ? 2
                                                                                           : 1,
                        base});
  }
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    if (a.progress != b.progress) return a.progress > b.progress;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.base > b.base;
  });
  std::vector<std::string> ordered;
  for (const Candidate& c : found) ordered.push_back(c.base);
  return ordered;
}

CheckpointProgress checkpoint_progress(const std::string& base) {
  try {
    const nlohmann::json meta = read_metadata_json(base).at("metadata");
    const nlohmann::json loader = meta.value("loader", nlohmann::json::object());
    return {meta.at("num_updates").get<int64_t>(), loader.value("epoch", int64_t(-1)),
            loader.value("batch_index", int64_t(-1)), meta.value("validated", true)};
  } catch (const std::exception&) {
    return {};  // unreadable: tried last, where loading reports why
  }
}

std::vector<std::string> remove_incomplete_saves(const std::string& save_dir) {
  std::vector<std::string> removed;
  if (!fs::is_directory(save_dir)) return removed;
  auto remove = [&](const fs::path& path) {
    if (fs::remove(path)) removed.push_back(path.string());
  };
  std::set<std::string> bases;  // of the files under the trainer's checkpoint names
  std::vector<fs::path> temp_files;
  for (const auto& entry : fs::directory_iterator(save_dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string file = entry.path().filename().string();
    // The temp files of an interrupted save_checkpoint / write_file_atomic: NAME.<ext>.tmp.*
    if (const size_t temp = file.find(".tmp."); temp != std::string::npos) {
      if (is_checkpoint_name(checkpoint_base(file.substr(0, temp)))) temp_files.push_back(entry.path());
    } else if ((file.ends_with(".safetensors") || file.ends_with(".json")) &&
               is_checkpoint_name(checkpoint_base(file))) {
      bases.insert(checkpoint_base(entry.path().string()));
    }
  }
  for (const fs::path& path : temp_files) remove(path);
  // A save writes the tensor files first and the JSON last, and rotation removes the JSON
  // first: tensor files without their JSON, or a JSON without its weights, are what an
  // interrupted save or removal, or a full disk, left.
  for (const std::string& base : bases)
    if (!fs::exists(metadata_path(base)) || !fs::exists(weights_path(base)))
      for (const std::string& path : {metadata_path(base), weights_path(base), optimizer_path(base)}) remove(path);
  std::sort(removed.begin(), removed.end());
  return removed;
}

std::vector<std::string> finish_interrupted_save(const std::string& save_dir, const SaveRequest& request,
                                                 const CheckpointPolicy& policy, const std::string& base) {
  std::vector<std::string> written;
  const nlohmann::json record = read_metadata_json(base);
  for (const std::string& name : checkpoint_names(save_dir, request, policy)) {
    if (name == base || holds_same_checkpoint(name, record)) continue;
    copy_checkpoint(base, name);
    written.push_back(name);
  }
  remove_rotated_out(save_dir, policy);
  return written;
}

}  // namespace attn::app
