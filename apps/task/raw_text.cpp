// Raw text to ids. See raw_text.hpp.
#include "apps/task/raw_text.hpp"

#include <filesystem>

#include <fmt/core.h>

#include "apps/training/checkpoint.hpp"
#include "data/text_io.hpp"

namespace attn::app {

std::string find_bpe_codes(const TranslationTask& task, const std::string& checkpoint_path, const std::string& given,
                           const std::string& command) {
  if (!given.empty()) return given;
  if (!task.bpe_codes.empty()) return task.bpe_codes;
  const std::filesystem::path beside = std::filesystem::path(checkpoint_base(checkpoint_path)).parent_path() / "codes";
  if (std::filesystem::exists(beside)) return beside.string();
  throw Error(fmt::format("{}: no BPE codes recorded in {} and no file {}; pass --bpe-codes", command, checkpoint_path,
                          beside.string()));
}

RawTextEncoder::RawTextEncoder(const std::string& language, const std::string& bpe_codes,
                               const data::Dictionary& dictionary, bool tokenize)
    : tokenizer_(data::moses_tokenizer_options(language)),
      bpe_(bpe_codes.empty() ? std::nullopt
                             : std::optional<data::BpeEncoder>(std::in_place, data::BpeCodes::read(bpe_codes),
                                                               data::BpeApplyOptions{})),
      dictionary_(dictionary),
      tokenize_(tokenize) {}

std::string RawTextEncoder::segment(const std::string& line, const std::string& file, size_t line_number) const {
  data::check_utf8(line, file, line_number);
  const std::string tokens = tokenize_ ? tokenizer_.tokenize(line) : line;
  return bpe_ ? bpe_->process_line(tokens) : tokens;
}

std::vector<int32_t> RawTextEncoder::encode(const std::string& line, const std::string& file,
                                            size_t line_number) const {
  return dictionary_.encode_line(segment(line, file, line_number)).ids;
}

}  // namespace attn::app
