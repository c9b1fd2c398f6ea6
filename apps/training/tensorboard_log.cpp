// See tensorboard_log.hpp.
#include "apps/training/tensorboard_log.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

namespace attn::app {
namespace {

// The process's command line, its arguments separated by spaces (as fairseq joins sys.argv).
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text)
    if (c == '\0') c = ' ';
  return text;
}

// fairseq's name of a training-log field, where it has another.
std::string tag_of(const std::string& field) {
  if (field == "tokens_per_second") return "wps";
  if (field == "elapsed") return "wall";
  return field;
}

}  // namespace

void TensorBoardLog::write(const nlohmann::json& record) {
  const std::string type = record.value("type", "");
  if (type != "train" && type != "train_epoch" && type != "valid") return;
  TensorBoardEventFile& events = run(type == "train"         ? "train_inner"
                                     : type == "train_epoch" ? "train"
                                                             : record.at("subset").get<std::string>());
  const int64_t update = record.at("update").get<int64_t>();
  for (const auto& [field, value] : record.items())
    if (value.is_number() && field != "epoch" && field != "update")
      events.add_scalar(tag_of(field), value.get<double>(), update);
}

TensorBoardEventFile& TensorBoardLog::run(const std::string& name) {
  std::unique_ptr<TensorBoardEventFile>& events = runs_[name];
  if (!events) {
    events = std::make_unique<TensorBoardEventFile>((std::filesystem::path(folder_) / name).string());
    events->add_text("sys.argv/text_summary", command_line(), 0);
  }
  return *events;
}

}  // namespace attn::app
