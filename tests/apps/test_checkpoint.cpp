// Tests of apps/checkpoint: round trip, rejection of truncated / torn / modified / missing
// files with clear errors (wrong JSON types naming the key), names and rotation, finishing an
// interrupted save, newest-first listing, averaging, and the refusal to write a weights-only
// checkpoint where it would lose a training run's state.
#include <catch.hpp>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "apps/training/checkpoint.hpp"
#include "apps/training/save_dir_lock.hpp"
#include "nn/checkpoint_names.hpp"
#include "synthetic_corpus.hpp"

using namespace attn;
using namespace attn::app;
namespace fs = std::filesystem;

namespace {

CheckpointContent sample_content(float scale, int64_t num_updates) {
  Tensor w = from_vector<float>({1 * scale, 2 * scale, 3 * scale, 4 * scale, 5 * scale, 6 * scale}, {2, 3});
  Tensor m = from_vector<float>({0.5f, -0.25f}, {2});
  return {{{"encoder.w", w}, {"decoder.b", from_vector<int64_t>({7, 9}, {2})}},
          {{"state.encoder.w.exp_avg", m}},
          {{"num_updates", num_updates}, {"note", "sample"}}};
}

void truncate_file(const std::string& path, size_t bytes) { fs::resize_file(path, fs::file_size(path) - bytes); }

void flip_last_byte(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-1, std::ios::end);
  char c = 0;
  f.get(c);
  f.seekp(-1, std::ios::end);
  f.put(char(c ^ 0x5a));
}

}  // namespace

TEST_CASE("checkpoint: round trip of weights, optimizer state and metadata", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_roundtrip");
  const std::string base = dir + "/checkpoint_last";
  save_checkpoint(base, sample_content(1.0f, 12));
  REQUIRE(fs::exists(dir + "/checkpoint_last.safetensors"));
  REQUIRE(fs::exists(dir + "/checkpoint_last.optimizer.safetensors"));
  REQUIRE(fs::exists(dir + "/checkpoint_last.json"));

  const CheckpointContent loaded = load_checkpoint(base + ".safetensors");  // any of the names works
  REQUIRE(loaded.model.size() == 2);
  CHECK(loaded.model[0].first == "encoder.w");
  CHECK(loaded.model[0].second.to_vector() == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(loaded.model[1].second.dtype() == DType::Int64);
  CHECK(loaded.model[1].second.to_vector() == std::vector<double>{7, 9});
  REQUIRE(loaded.optimizer.size() == 1);
  CHECK(loaded.optimizer[0].second.to_vector() == std::vector<double>{0.5, -0.25});
  CHECK(loaded.metadata.at("num_updates") == 12);
  CHECK(load_checkpoint(base, /*with_optimizer=*/false).optimizer.empty());
  CHECK(load_checkpoint_metadata(base).at("note") == "sample");
}

TEST_CASE("checkpoint: truncated, torn, modified and missing files are rejected", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_torn");
  const std::string base = dir + "/checkpoint_last";
  save_checkpoint(base, sample_content(1.0f, 1));

  SECTION("truncated weights") {
    truncate_file(weights_path(base), 4);
    CHECK_THROWS_WITH(load_checkpoint(base), Catch::Contains("truncated") && Catch::Contains("checkpoint_last.safetensors"));
  }
  SECTION("truncated optimizer state") {
    truncate_file(optimizer_path(base), 1);
    CHECK_THROWS_AS(load_checkpoint(base), CheckpointError);
    CHECK_THROWS_AS(load_checkpoint_metadata(base), CheckpointError);
  }
  SECTION("torn pair: new weights beside the previous JSON") {
    const std::string old_json = dir + "/old.json";
    fs::copy_file(metadata_path(base), old_json);
    save_checkpoint(base, sample_content(2.0f, 2));  // same sizes, different bytes
    fs::copy_file(old_json, metadata_path(base), fs::copy_options::overwrite_existing);
    CHECK_THROWS_WITH(load_checkpoint(base), Catch::Contains("checksum"));
  }
  SECTION("modified byte") {
    flip_last_byte(weights_path(base));
    CHECK_THROWS_WITH(load_checkpoint(base), Catch::Contains("checksum"));
  }
  SECTION("missing weights") {
    fs::remove(weights_path(base));
    CHECK_THROWS_WITH(load_checkpoint(base), Catch::Contains("missing"));
  }
  SECTION("truncated JSON") {
    truncate_file(metadata_path(base), 10);
    CHECK_THROWS_WITH(load_checkpoint(base), Catch::Contains("not valid JSON"));
  }
  SECTION("no checkpoint at all") {
    CHECK_THROWS_WITH(load_checkpoint(dir + "/nothing"), Catch::Contains("nothing.json"));
  }
}

TEST_CASE("checkpoint: a save that fails leaves the checkpoint of that name as it was", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_failed_save");
  const std::string base = dir + "/averaged";
  CheckpointContent weights_only = sample_content(1.0f, 1);
  weights_only.optimizer.clear();
  save_checkpoint(base, weights_only);
  fs::create_directory(optimizer_path(base));  // the second file of the next save cannot be written
  CHECK_THROWS_WITH(save_checkpoint(base, sample_content(2.0f, 2)),
                    Catch::Contains(optimizer_path(base)) && Catch::Contains("is a folder, not a file"));
  // Nothing was renamed into place: the old weights and the JSON that describes them.
  CHECK(load_checkpoint(base, /*with_optimizer=*/false).model[0].second.to_vector()[0] == 1);
  for (const auto& entry : fs::directory_iterator(dir))
    CHECK(entry.path().string().find(".tmp.") == std::string::npos);  // no temp file left
}

TEST_CASE("checkpoint: a folder in a file's place is named, not read as an empty file", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_folder_in_place");
  for (const auto& file_of : {weights_path, metadata_path}) {
    const std::string base = dir + "/checkpoint_last";
    save_checkpoint(base, sample_content(1.0f, 1));
    const std::string path = file_of(base);
    INFO(path);
    fs::remove(path);
    fs::create_directory(path);
    CHECK_THROWS_WITH(load_checkpoint(base), Catch::Contains(path) && Catch::Contains("is a folder, not a file"));
    CHECK_THROWS_AS(load_checkpoint_metadata(base), CheckpointError);  // a resume goes on to an older one
    fs::remove_all(path);
  }
}

TEST_CASE("checkpoint: a path naming no checkpoint lists those its folder holds", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_not_named");
  for (const char* name : {"checkpoint_last", "checkpoint_best", "averaged"})
    save_checkpoint(dir + "/" + name, sample_content(1.0f, 1));
  std::ofstream(dir + "/table.json") << "[]\n";  // a JSON file that is not a checkpoint

  CHECK_THROWS_WITH(load_checkpoint(dir + "/checkpoint_best.pt"),
                    Catch::Contains("checkpoint_best.pt.json does not exist") &&
                        Catch::Contains("holds averaged, checkpoint_best, checkpoint_last") &&
                        !Catch::Contains("table"));
  CHECK_THROWS_WITH(load_checkpoint(dir), Catch::Contains(dir + ": is a folder, not a checkpoint") &&
                                             Catch::Contains("holds averaged, checkpoint_best, checkpoint_last"));

  for (int epoch = 1; epoch <= 9; ++epoch)
    save_checkpoint(dir + "/checkpoint" + std::to_string(epoch), sample_content(1.0f, epoch));
  CHECK_THROWS_WITH(load_checkpoint(dir + "/checkpoint10"), Catch::Contains(", ... (12 in all)"));

  const std::string empty = testing::fresh_temp_dir("ckpt_not_named_empty");
  CHECK_THROWS_WITH(load_checkpoint(empty + "/checkpoint_last"), !Catch::Contains("holds"));
  CHECK_THROWS_WITH(load_checkpoint(""), "a checkpoint path is empty (give NAME, NAME.safetensors or NAME.json)");
}

TEST_CASE("checkpoint: wrong JSON types are errors naming the file and the key", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_json_types");
  const std::string base = dir + "/checkpoint_last";
  save_checkpoint(base, sample_content(1.0f, 1));
  const nlohmann::json good = nlohmann::json::parse(std::ifstream(metadata_path(base)));
  for (const auto& [pointer, value, key] :
       {std::tuple<std::string, nlohmann::json, std::string>{"/files/weights/bytes", "97", "files.weights.bytes"},
        {"/files/optimizer/checksum", 5, "files.optimizer.checksum"},
        {"/files/weights", nullptr, "files.weights"},
        {"/files", nlohmann::json::array(), "files"},
        {"/metadata", "none", "metadata"}}) {
    nlohmann::json bad = good;
    bad[nlohmann::json::json_pointer(pointer)] = value;
    std::ofstream(metadata_path(base)) << bad.dump();
    CHECK_THROWS_WITH(load_checkpoint(base), Catch::Contains(metadata_path(base)) && Catch::Contains("\"" + key + "\""));
  }
  CHECK_THROWS_WITH(referenced_file({{"file", 3}, {"checksum", "x"}}, base, "source dictionary"),
                    Catch::Contains("source dictionary") && Catch::Contains("string"));
}

TEST_CASE("checkpoint: names follow fairseq's save dir", "[checkpoint]") {
  CheckpointPolicy policy;
  policy.save_interval_updates = 5;
  auto names = [&](SaveRequest r) {
    std::vector<std::string> out;
    for (const auto& n : checkpoint_names("d", r, policy)) out.push_back(fs::path(n).filename().string());
    return out;
  };
  CHECK(names({.epoch = 3, .num_updates = 30, .end_of_epoch = true, .is_best = true}) ==
        std::vector<std::string>{"checkpoint3", "checkpoint_best", "checkpoint_last"});
  CHECK(names({.epoch = 3, .num_updates = 25, .end_of_epoch = false, .is_best = false}) ==
        std::vector<std::string>{"checkpoint_3_25", "checkpoint_last"});
  CHECK(names({.epoch = 3, .num_updates = 26, .end_of_epoch = false, .is_best = false}) ==
        std::vector<std::string>{"checkpoint_last"});
  policy.save_epoch_checkpoints = false;
  CHECK(names({.epoch = 3, .num_updates = 30, .end_of_epoch = true, .is_best = false}) ==
        std::vector<std::string>{"checkpoint_last"});
  CHECK(checkpoint_base("a/checkpoint3.optimizer.safetensors") == "a/checkpoint3");
  CHECK(checkpoint_base("a/checkpoint3.json") == "a/checkpoint3");
  CHECK(checkpoint_base("a/checkpoint3") == "a/checkpoint3");
}

TEST_CASE("checkpoint: rotation keeps the newest epoch and update checkpoints", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_rotation");
  CheckpointPolicy policy;
  policy.save_interval_updates = 2;
  policy.keep_last_epochs = 2;
  policy.keep_interval_updates = 1;
  int64_t updates = 0;
  for (int64_t epoch = 1; epoch <= 3; ++epoch) {
    for (int k = 0; k < 2; ++k) {
      ++updates;
      save_rotating(dir, {.epoch = epoch, .num_updates = updates, .end_of_epoch = false, .is_best = false}, policy,
                    sample_content(float(updates), updates));
    }
    save_rotating(dir, {.epoch = epoch, .num_updates = updates, .end_of_epoch = true, .is_best = epoch == 2}, policy,
                  sample_content(float(updates), updates));
  }
  std::vector<std::string> present;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") present.push_back(e.path().stem().string());
  std::sort(present.begin(), present.end());
  CHECK(present == std::vector<std::string>{"checkpoint2", "checkpoint3", "checkpoint_3_6", "checkpoint_best",
                                            "checkpoint_last"});
  CHECK_FALSE(fs::exists(dir + "/checkpoint1.safetensors"));
  CHECK(load_checkpoint_metadata(dir + "/checkpoint_best").at("num_updates") == 4);
  CHECK(load_checkpoint(dir + "/checkpoint_last").model[0].second.to_vector()[0] == 6.0);
  // The names of one save are links to one file; a later save under one of the names replaces
  // that name only.
  CHECK(load_checkpoint(dir + "/checkpoint_best").model[0].second.to_vector()[0] == 4.0);
  CHECK(fs::hard_link_count(dir + "/checkpoint_best.safetensors") == 2);  // and checkpoint2
  CHECK(fs::hard_link_count(dir + "/checkpoint_last.safetensors") == 2);  // and checkpoint3

  const std::vector<std::string> order = checkpoints_newest_first(dir);
  REQUIRE(order.size() == 5);
  CHECK(fs::path(order[0]).filename() == "checkpoint_last");
  CHECK(fs::path(order[3]).filename() == "checkpoint2");  // 4 updates, the oldest
  CHECK(fs::path(order[4]).filename() == "checkpoint_best");  // as old: checkpoint_best is tried last
}

TEST_CASE("checkpoint: --keep-interval-updates-pattern spares the multiples; a keep of 0 keeps all, as fairseq's",
          "[checkpoint]") {
  const auto saved_names = [](CheckpointPolicy policy, const std::string& name) {
    const std::string dir = testing::fresh_temp_dir(name);
    policy.save_interval_updates = 1;
    for (int64_t updates = 1; updates <= 8; ++updates)
      save_rotating(dir, {.epoch = 1, .num_updates = updates, .end_of_epoch = updates == 8, .is_best = false}, policy,
                    sample_content(float(updates), updates));
    std::vector<std::string> present;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json" && e.path().stem().string().starts_with("checkpoint"))
        present.push_back(e.path().stem().string());
    std::sort(present.begin(), present.end());
    return present;
  };
  CheckpointPolicy policy;
  policy.keep_interval_updates = 2;
  policy.keep_interval_updates_pattern = 3;  // updates 3 and 6 stay, and the newest two of the others
  CHECK(saved_names(policy, "ckpt_pattern") == std::vector<std::string>{"checkpoint1", "checkpoint_1_3", "checkpoint_1_5",
                                                                         "checkpoint_1_6", "checkpoint_1_7",
                                                                         "checkpoint_last"});
  policy.keep_interval_updates = 0;  // fairseq rotates only for N > 0
  policy.keep_last_epochs = 0;
  CHECK(saved_names(policy, "ckpt_keep_zero").size() == 1 + 7 + 1);  // checkpoint1, _1_1.._1_7, _last
}

TEST_CASE("checkpoint: --keep-best-checkpoints keeps the saves of the N best scores, by name", "[checkpoint]") {
  CHECK(nn::best_checkpoint_name("loss", 3.91249, 1500) == "checkpoint.best_loss_3.912_1500");
  const auto parsed = nn::parse_best_checkpoint_name("checkpoint.best_bleu_27.345_800");
  REQUIRE(parsed);
  CHECK(parsed->metric == "bleu");
  CHECK(parsed->score == 27.345);
  CHECK(parsed->updates == 800);
  for (const char* other : {"checkpoint.best_loss_3_1500", "checkpoint.best__3.1_2", "checkpoint.best_loss_3.1_",
                            "checkpoint.best_loss_3.1_x", "checkpoint.best_3.1_2", "checkpoint_best", "checkpoint3"})
    CHECK_FALSE(nn::parse_best_checkpoint_name(other));
  CHECK(is_checkpoint_name("checkpoint.best_loss_3.912_1500"));

  const std::string dir = testing::fresh_temp_dir("ckpt_keep_best");
  CheckpointPolicy policy;
  policy.keep_best_checkpoints = 2;
  policy.save_epoch_checkpoints = false;
  auto present = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  // Scores 5, 4, 4.5 (kept: 4, 4.5), 6 (not written: worse than both), an unvalidated save, 3.
  const std::vector<std::optional<double>> scores = {5.0, 4.0, 4.5, 6.0, std::nullopt, 3.0};
  for (size_t i = 0; i < scores.size(); ++i) {
    const int64_t updates = int64_t(i + 1) * 10;
    const std::vector<std::string> written =
        save_rotating(dir, {.epoch = 1, .num_updates = updates, .end_of_epoch = true, .score = scores[i]}, policy,
                      sample_content(float(updates), updates));
    const bool best_written = std::any_of(written.begin(), written.end(), [](const std::string& name) {
      return fs::path(name).filename().string().starts_with("checkpoint.best_");
    });
    INFO("save " << i);
    CHECK(best_written == (i != 3 && i != 4));
  }
  CHECK(present() == std::vector<std::string>{"checkpoint.best_loss_3.000_60", "checkpoint.best_loss_4.000_20",
                                              "checkpoint_last"});
  CHECK(load_checkpoint(dir + "/checkpoint.best_loss_4.000_20").model[0].second.to_vector()[0] == 20.0);
  // BLEU: higher is better, and another metric's names are left alone.
  policy.best_metric = "bleu";
  policy.maximize_best_metric = true;
  policy.keep_best_checkpoints = 1;
  for (const double bleu : {20.0, 25.0, 22.0})
    save_rotating(dir, {.epoch = 2, .num_updates = int64_t(bleu), .end_of_epoch = true, .score = bleu}, policy,
                  sample_content(1.0f, 1));
  CHECK(present() == std::vector<std::string>{"checkpoint.best_bleu_25.000_25", "checkpoint.best_loss_3.000_60",
                                              "checkpoint.best_loss_4.000_20", "checkpoint_last"});
}

TEST_CASE("checkpoint: a save cut off after its first name is finished from it", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_finish_save");
  CheckpointPolicy policy;
  policy.save_interval_updates = 2;
  const SaveRequest first{.epoch = 1, .num_updates = 2, .end_of_epoch = false, .is_best = false};
  save_rotating(dir, first, policy, sample_content(1.0f, 2));
  // The next save (an epoch end, best) wrote checkpoint1 and was killed before the copies.
  const SaveRequest cut{.epoch = 1, .num_updates = 3, .end_of_epoch = true, .is_best = true};
  save_checkpoint(dir + "/checkpoint1", sample_content(2.0f, 3));
  CHECK(finish_interrupted_save(dir, cut, policy, dir + "/checkpoint1") ==
        std::vector<std::string>{dir + "/checkpoint_best", dir + "/checkpoint_last"});
  for (const char* name : {"checkpoint_best", "checkpoint_last"})
    CHECK(load_checkpoint(dir + "/" + name).model[0].second.to_vector()[0] == 2.0);
  CHECK(finish_interrupted_save(dir, cut, policy, dir + "/checkpoint1").empty());  // nothing left to do
}

TEST_CASE("checkpoint: averaging writes a loadable checkpoint with the mean weights", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_average");
  save_checkpoint(dir + "/checkpoint1", sample_content(1.0f, 10));
  save_checkpoint(dir + "/checkpoint2", sample_content(2.0f, 20));
  average_checkpoints_into({dir + "/checkpoint2", dir + "/checkpoint1"}, dir + "/averaged.safetensors");
  const CheckpointContent averaged = load_checkpoint(dir + "/averaged");
  CHECK(averaged.model[0].second.to_vector() == std::vector<double>{1.5, 3, 4.5, 6, 7.5, 9});
  CHECK(averaged.model[1].second.to_vector() == std::vector<double>{7, 9});  // integers: floor of the mean
  CHECK(averaged.optimizer.empty());
  CHECK(averaged.metadata.at("num_updates") == 20);  // metadata of the first input

  SECTION("checkpoints of other data or another model are refused; other dropouts are not") {
    auto save_with = [&](const std::string& name, const nlohmann::json& task, const nlohmann::json& config) {
      CheckpointContent content = sample_content(1.0f, 10);
      content.metadata["task"] = task;
      content.metadata["model_config"] = config;
      save_checkpoint(dir + "/" + name, content);
    };
    std::ofstream(dir + "/dict_one.txt") << "hallo 3\n";
    std::ofstream(dir + "/dict_two.txt") << "welt 3\n";
    const nlohmann::json task = {{"target_dict", keep_file_beside(dir + "/dict_one.txt", dir + "/one", "dict.de.txt")}};
    const nlohmann::json config = {{"tgt_vocab_size", 8}, {"dropout", 0.1}, {"mixer_options", {{"weight_dropout", 0.0}}}};
    save_with("a", task, config);
    nlohmann::json other_dropouts = config;
    other_dropouts["dropout"] = 0.3;
    other_dropouts["mixer_options"]["weight_dropout"] = 0.1;
    save_with("b", task, other_dropouts);
    CHECK_NOTHROW(average_checkpoints_into({dir + "/a", dir + "/b"}, dir + "/ab"));
    const nlohmann::json other_dictionary = {
        {"target_dict", keep_file_beside(dir + "/dict_two.txt", dir + "/two", "dict.de.txt")}};
    save_with("c", other_dictionary, config);
    CHECK_THROWS_WITH(average_checkpoints_into({dir + "/a", dir + "/c"}, dir + "/ac"),
                      Catch::Contains("differ in target_dict") && Catch::Contains(dir + "/c"));
    nlohmann::json other_vocabulary = config;
    other_vocabulary["tgt_vocab_size"] = 6;
    save_with("d", task, other_vocabulary);
    CHECK_THROWS_WITH(average_checkpoints_into({dir + "/a", dir + "/d"}, dir + "/ad"),
                      Catch::Contains("differ in model_config.tgt_vocab_size"));
    CHECK_FALSE(fs::exists(dir + "/ad.json"));
  }
  truncate_file(weights_path(dir + "/checkpoint1"), 8);
  CHECK_THROWS_AS(average_checkpoints_into({dir + "/checkpoint1"}, dir + "/again"), CheckpointError);
}

TEST_CASE("checkpoint: a file kept beside a checkpoint is found there, else at the path it came from", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_beside");
  const std::string source = dir + "/data/dict.txt", save_dir = dir + "/save", base = save_dir + "/checkpoint_last";
  fs::create_directories(dir + "/data");
  std::ofstream(source) << "hello 3\n";
  const nlohmann::json reference = keep_file_beside(source, save_dir, "dict.en.txt");
  CHECK(reference.at("file") == "dict.en.txt");
  CHECK(reference.at("path") == fs::absolute(source).lexically_normal().string());
  CHECK(reference.at("checksum") == file_checksum(source));
  CHECK(file_checksum(save_dir + "/dict.en.txt") == file_checksum(source));
  CHECK(keep_file_beside(source, save_dir, "dict.en.txt") == reference);  // an identical copy is kept
  std::ofstream(dir + "/data/other.txt") << "world 3\n";
  CHECK_THROWS_WITH(keep_file_beside(dir + "/data/other.txt", save_dir, "dict.en.txt"),
                    Catch::Contains("other contents") && Catch::Contains("dict.en.txt"));

  CHECK(referenced_file(reference, base, "source dictionary") == save_dir + "/dict.en.txt");
  fs::remove(save_dir + "/dict.en.txt");  // the copy gone, or a checkpoint written before copies
  CHECK(referenced_file(reference, base, "source dictionary") == reference.at("path"));
  nlohmann::json old_style = reference;
  old_style.erase("file");
  CHECK(referenced_file(old_style, base, "source dictionary") == reference.at("path"));
  std::ofstream(source) << "hello 4\n";
  CHECK_THROWS_WITH(referenced_file(reference, base, "source dictionary"),
                    Catch::Contains("source dictionary") && Catch::Contains("changed"));
  fs::remove(source);
  CHECK_THROWS_WITH(referenced_file(reference, base, "source dictionary"),
                    Catch::Contains("missing") && Catch::Contains(save_dir + "/dict.en.txt") && Catch::Contains(source));
}

TEST_CASE("checkpoint: averaging needs only the weights and copies the files they refer to beside its output",
          "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_average_beside");
  std::ofstream(dir + "/codes") << "#version: 0.2\na b\n";
  for (const auto& [name, scale] : {std::pair{"checkpoint1", 1.0f}, {"checkpoint2", 2.0f}}) {
    CheckpointContent content = sample_content(scale, 10);
    content.metadata["task"] = {{"bpe_codes", keep_file_beside(dir + "/codes", dir + "/save", "bpecodes")}};
    save_checkpoint(dir + "/save/" + name, content);
  }
  fs::remove(optimizer_path(dir + "/save/checkpoint1"));
  CHECK_THROWS_WITH(load_checkpoint_metadata(dir + "/save/checkpoint1"), Catch::Contains("missing"));
  CHECK(load_checkpoint_metadata(dir + "/save/checkpoint1", /*with_optimizer=*/false).at("note") == "sample");

  average_checkpoints_into({dir + "/save/checkpoint1", dir + "/save/checkpoint2"}, dir + "/elsewhere/averaged");
  const nlohmann::json reference = load_checkpoint_metadata(dir + "/elsewhere/averaged").at("task").at("bpe_codes");
  CHECK(reference.at("file") == "bpecodes");
  fs::remove_all(dir + "/save");
  fs::remove(dir + "/codes");
  CHECK(referenced_file(reference, dir + "/elsewhere/averaged", "BPE codes") == dir + "/elsewhere/bpecodes");
  CHECK(file_checksum(dir + "/elsewhere/bpecodes") == reference.at("checksum"));
}

TEST_CASE("checkpoint: averaging refuses an output that holds a run's optimizer state or lies in a running run's "
          "save dir", "[checkpoint]") {
  const std::string dir = testing::fresh_temp_dir("ckpt_average_over_training");
  save_checkpoint(dir + "/save/checkpoint1", sample_content(1.0f, 10));
  save_checkpoint(dir + "/save/checkpoint_last", sample_content(2.0f, 20));
  const std::vector<std::string> inputs = {dir + "/save/checkpoint1", dir + "/save/checkpoint_last"};
  for (const std::string& output : {dir + "/save/checkpoint_last", dir + "/save/checkpoint1.json"}) {
    INFO(output);  // a trainer name, an input too, under any of its names
    CHECK_THROWS_WITH(average_checkpoints_into(inputs, output),
                      Catch::Contains(optimizer_path(checkpoint_base(output))) &&
                          Catch::Contains("choose another --output"));
    CHECK(load_checkpoint(output).optimizer.size() == 1);  // the training state is still there
  }
  {
    const SaveDirLock running(dir + "/save", [](const std::string&) {});  // this process: a run that runs
    CHECK_THROWS_WITH(average_checkpoints_into(inputs, dir + "/save/averaged"),
                      Catch::Contains("running now") && Catch::Contains(running.path()));
    CHECK_FALSE(fs::exists(dir + "/save/averaged.json"));
  }
  average_checkpoints_into(inputs, dir + "/save/averaged");  // the run ended: its dir takes the average
  // Nor over one of its inputs, under any name, nor into a name that is no file.
  average_checkpoints_into(inputs, dir + "/first");
  const std::vector<std::string> weights_only = {dir + "/first", dir + "/save/averaged"};
  for (const std::string& output : {dir + "/first", dir + "/first.safetensors", dir + "/./save/averaged.json"}) {
    INFO(output);
    CHECK_THROWS_WITH(average_checkpoints_into(weights_only, output),
                      Catch::Contains("is also an input of average") && Catch::Contains("writing there would lose it"));
  }
  CHECK_THROWS_WITH(average_checkpoints_into(weights_only, dir + "/"), Catch::Contains("names no checkpoint"));
  CHECK_THROWS_WITH(average_checkpoints_into(weights_only, ""), Catch::Contains("names no checkpoint"));
  CHECK_FALSE(fs::exists(dir + "/.safetensors"));
  average_checkpoints_into(inputs, dir + "/save/averaged");  // and a weights-only checkpoint is rewritten
  CHECK(load_checkpoint(dir + "/save/averaged").model[0].second.to_vector()[0] == 1.5);
}
