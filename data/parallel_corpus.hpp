// A plain parallel corpus: PREFIX.SRC and PREFIX.TGT, one sentence per line, line i of one
// file translating line i of the other (the input format of fairseq-preprocess and of the
// WMT recipes, docs/mt-tools.md §1.5 and §4). Lines must be valid UTF-8 (errors name
// file:line) and both files must have the same number of lines (errors name both files
// and their counts).
#pragma once
#include <string>
#include <vector>

namespace attn::data {

struct ParallelCorpus {
  std::string source_path, target_path;
  std::vector<std::string> source, target;  // same length

  size_t size() const { return source.size(); }
};

// Reads source_path and target_path as a sentence-aligned pair of files.
ParallelCorpus read_parallel_files(const std::string& source_path, const std::string& target_path);
// Reads PREFIX.SOURCE_LANG and PREFIX.TARGET_LANG.
ParallelCorpus read_parallel_corpus(const std::string& prefix, const std::string& source_lang,
                                    const std::string& target_lang);

}  // namespace attn::data
