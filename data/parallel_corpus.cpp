#include "data/parallel_corpus.hpp"

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {

ParallelCorpus read_parallel_files(const std::string& source_path, const std::string& target_path) {
  ParallelCorpus corpus{source_path, target_path, read_lines(source_path), read_lines(target_path)};
  if (corpus.source.size() != corpus.target.size())
    throw DataError(fmt::format("parallel files differ in line count: {} has {} lines, {} has {} lines",
                                source_path, corpus.source.size(), target_path, corpus.target.size()));
  return corpus;
}

ParallelCorpus read_parallel_corpus(const std::string& prefix, const std::string& source_lang,
                                    const std::string& target_lang) {
  return read_parallel_files(prefix + "." + source_lang, prefix + "." + target_lang);
}

}  // namespace attn::data
