// Raw text → token ids the way a trained model saw its data (docs/mt-tools.md §1–2): the
// Moses tokenizer of the language, the BPE codes the checkpoint recorded, the dictionary.
// Used by `translate` (sources) and `inspect` (sources and targets).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/task/translation_task.hpp"
#include "data/bpe_apply.hpp"
#include "data/moses_tokenizer.hpp"

namespace attn::app {

// The BPE codes for raw text given to checkpoint `checkpoint_path`: `given` when not empty,
// else the codes the task recorded, else `codes` beside the checkpoint; throws naming the
// command and what it looked for.
std::string find_bpe_codes(const TranslationTask& task, const std::string& checkpoint_path, const std::string& given,
                           const std::string& command);

class RawTextEncoder {
 public:
  // `language`: the Moses tokenizer's; tokenize = false takes tokenized input as it is; empty
  // `bpe_codes`: no BPE (the input is segmented already, or the model has none).
  RawTextEncoder(const std::string& language, const std::string& bpe_codes, const data::Dictionary& dictionary,
                 bool tokenize = true);
  // A line as the model's symbols, separated by spaces (tokenized, BPE applied); `file` and
  // `line_number` name the line in errors (bad UTF-8).
  std::string segment(const std::string& line, const std::string& file, size_t line_number) const;
  // Ids of a line's symbols, </s> last.
  std::vector<int32_t> encode(const std::string& line, const std::string& file, size_t line_number) const;
  const data::Dictionary& dictionary() const { return dictionary_; }

 private:
  data::MosesTokenizer tokenizer_;
  std::optional<data::BpeEncoder> bpe_;
  const data::Dictionary& dictionary_;
  bool tokenize_;
};

}  // namespace attn::app
