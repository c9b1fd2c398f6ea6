#include "data/post_process.hpp"

#include <algorithm>

#include <fmt/ranges.h>

#include "core/error.hpp"
#include "data/bleu_tokenizers.hpp"

namespace attn::data {
namespace {

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, from.size(), from) == 0) {
      out += to;
      i += from.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

// Python's str.strip().
std::string strip(std::string_view text) { return std::string(strip_python_whitespace(text)); }

// Spaces removed, then `marker` read as the space between words (sentencepiece, wordpiece, …).
std::string join_at(std::string_view sentence, std::string_view marker) {
  return strip(replace_all(replace_all(sentence, " ", ""), marker, " "));
}

std::string collapse_spaces(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != ' ' || out.empty() || out.back() != ' ') out += c;
  return out;
}

}  // namespace

const std::vector<std::string>& post_process_schemes() {
  static const std::vector<std::string> schemes = {"subword_nmt", "@@ ",     "@@",   "sentencepiece", "wordpiece",
                                                   "letter",      "silence", "_EOW", "none"};
  return schemes;
}

std::string post_process(std::string_view sentence, std::string_view scheme) {
  if (scheme.empty() || scheme == "none") return std::string(sentence);
  if (scheme == "subword_nmt" || scheme == "@@ " || scheme == "@@") {
    const std::string marker = scheme == "subword_nmt" ? "@@ " : std::string(scheme);
    return std::string(rstrip_python_whitespace(replace_all(std::string(sentence) + " ", marker, "")));
  }
  if (scheme == "sentencepiece") return join_at(sentence, "\u2581");
  if (scheme == "wordpiece") return join_at(sentence, "_");
  if (scheme == "letter") return join_at(sentence, "|");
  if (scheme == "_EOW") return join_at(sentence, "_EOW");
  if (scheme == "silence") return strip(collapse_spaces(replace_all(sentence, "<SIL>", "")));
  throw Error(fmt::format("unknown post-processing scheme '{}' (fairseq's: {})", scheme,
                          fmt::join(post_process_schemes(), ", ")));
}

}  // namespace attn::data
