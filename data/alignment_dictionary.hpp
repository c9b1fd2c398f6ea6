// fairseq-preprocess --alignfile: the alignment dictionary of a training corpus, the file
// `generate --replace-unk` and `translate --replace-unk` take to replace an unknown word by its
// usual translation instead of copying it (docs/mt-tools.md §4).
//
// The alignment file has one line per training pair, the pairs of aligned word positions
// "i-j" (0-based, source i, target j) separated by spaces, as fast_align and eflomal print
// them. Each pair of words that are both in their dictionaries (neither <unk>) is counted;
// each source word gets the target word it was aligned to most often, the first one seen among
// equals, and the file lists "SOURCE TARGET" lines in the order the source words were first
// seen — fairseq's order, byte for byte. A line that is no such list, a position past its
// sentence (or on its end), or files of different lengths is an error naming the file and
// line, where fairseq's script fails with an IndexError or an assertion.
#pragma once
#include <string>
#include <vector>

#include "data/dictionary.hpp"

namespace attn::data {

// The dictionary's text (alignment.SRC-TGT.txt) from the alignment file at `alignment_path`
// and the training pairs' lines (errors name `source_path`, `target_path`).
std::string alignment_dictionary_text(const std::string& alignment_path, const std::vector<std::string>& source_lines,
                                      const std::string& source_path, const std::vector<std::string>& target_lines,
                                      const std::string& target_path, const Dictionary& source_dict,
                                      const Dictionary& target_dict);

}  // namespace attn::data
