// Moses tokenizer and detokenizer speed on the 17 WMT17 newstest2017 German files (51,068
// lines, docs/mt-tools.md §2), one thread, checking the tokenized text byte for byte against
// tokenizer.perl -a -l de. Prints wall and CPU time (the CPU figure is stable on a busy machine).
//
//   bench_moses [VECTORS_DIR]     (default: the repository's tests/vectors)
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <fmt/core.h>

#include "data/moses_detokenizer.hpp"
#include "data/moses_tokenizer.hpp"

using namespace attn::data;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Concatenation of every file in a folder, in name order.
std::string read_folder(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& f : files) all += slurp(f);
  return all;
}

// Runs `filter` over every '\n'-terminated record of `text`; prints the throughput.
std::string timed_filter(const char* name, const std::string& text,
                         const std::function<std::string(std::string_view)>& filter) {
  auto wall_start = std::chrono::steady_clock::now();
  std::clock_t cpu_start = std::clock();
  std::string out;
  size_t lines = 0, tokens = 0;
  for (size_t start = 0; start < text.size(); ++lines) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string record = filter(std::string_view(text).substr(start, end - start));
    tokens += std::count(record.begin(), record.end(), ' ') + 1;
    out += record;
    start = end;
  }
  double cpu = double(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  fmt::print("{}: {} lines, ~{} tokens: wall {:.3f} s ({:.0f} lines/s), cpu {:.3f} s ({:.0f} lines/s, {:.0f} tokens/s)\n",
             name, lines, tokens, wall, lines / wall, cpu, lines / cpu, tokens / cpu);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path vectors = argc > 1 ? argv[1] : std::string(ATTNLAB_SOURCE_DIR) + "/tests/vectors";
  std::filesystem::path wmt = vectors / "upstream/wmt17-en-de";
  const std::string raw = read_folder(wmt / "raw");
  const std::string expected = read_folder(wmt / "tok-a");

  MosesTokenizerOptions options;
  options.language = MosesLanguage::German;
  options.aggressive_hyphen_splitting = true;
  const MosesTokenizer tokenizer(options);
  const MosesDetokenizer detokenizer(MosesLanguage::German);
  tokenizer.tokenize("warm-up.");  // builds the Unicode class table outside the timing

  std::string tokenized = timed_filter("tokenize -a -l de", raw, [&](auto r) { return tokenizer.tokenize_record(r); });
  fmt::print("tokenized output {} tokenizer.perl\n", tokenized == expected ? "==" : "DIFFERS FROM");
  timed_filter("detokenize -l de", tokenized, [&](auto r) { return detokenizer.detokenize_record(r); });
  return tokenized == expected ? 0 : 1;
}
