// BPE speed on the WMT17 newstest2017 EN-DE data (docs/mt-tools.md §1.6: fastBPE learns 40,000
// merges on these 1.08M tokens in 2.9 s, subword-nmt in 26.6 s, on 2 cores). Learns with
// -s 40000 (subword-nmt stops at 39,620 merges) and applies the codes to all 17 files, checking
// both results byte for byte against subword-nmt's output.
//
//   bench_bpe [VECTORS_DIR]     (default: the repository's tests/vectors)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/core.h>

#include "data/bpe_apply.hpp"
#include "data/bpe_learn.hpp"

using namespace attn::data;

namespace {

// Wall-clock and process CPU seconds (CPU time shows the work when the machine is shared).
struct Stopwatch {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  std::clock_t cpu = std::clock();
  double wall_seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(); }
  double cpu_seconds() const { return double(std::clock() - cpu) / CLOCKS_PER_SEC; }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count_tokens(const TextLines& text) {
  size_t n = 0;
  for (auto line : text.lines) n += split_words(line).size();
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string vectors = argc > 1 ? argv[1] : std::string(ATTNLAB_SOURCE_DIR) + "/tests/vectors";
  const std::string wmt = vectors + "/upstream/wmt17-en-de/";
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(wmt + "tok-a")) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  std::string corpus;
  for (const auto& file : files) corpus += read_utf8_file(file);
  const std::string expected_codes = slurp(wmt + "bpe/codes.40000-minfreq2-stopped");
  bool all_exact = true;

  // Learning: counting words + 40,000 merges; best of 3.
  double best_wall = 1e30, best_cpu = 1e30;
  std::string codes;
  for (int run = 0; run < 3; ++run) {
    Stopwatch watch;
    WordCounts words;
    count_words(split_lines(corpus, LineMode::SplitLines), words);
    BpeLearnResult result = learn_bpe(words, BpeLearnOptions{40000, 2});
    best_wall = std::min(best_wall, watch.wall_seconds());
    best_cpu = std::min(best_cpu, watch.cpu_seconds());
    codes = format_bpe_codes(result.merges);
  }
  const bool codes_exact = codes == expected_codes;
  all_exact &= codes_exact;
  TextLines text = split_lines(corpus, LineMode::Universal);
  const size_t tokens = count_tokens(text);
  fmt::print("learn: {} tokens, {} merges, {:.3f} s wall, {:.3f} s CPU (count words + merges); codes {}\n", tokens,
             std::count(codes.begin(), codes.end(), '\n') - 1, best_wall, best_cpu,
             codes_exact ? "byte-exact with subword-nmt" : "DIFFER from subword-nmt");

  // Applying: fresh encoder (empty word caches) per run; best of 3 for each thread count.
  const BpeCodes parsed = BpeCodes::parse(expected_codes, "codes.40000");
  const int max_threads = omp_get_max_threads();
  for (int threads : {1, max_threads}) {
    omp_set_num_threads(threads);
    double best_wall = 1e30, best_cpu = 1e30;
    for (int run = 0; run < 3; ++run) {
      BpeEncoder encoder(parsed, {});
      Stopwatch watch;
      std::string out = encoder.apply(text);
      best_wall = std::min(best_wall, watch.wall_seconds());
      best_cpu = std::min(best_cpu, watch.cpu_seconds());
    }
    fmt::print("apply: {} threads, {:.3f} s wall ({:.2f} M tokens/s), {:.3f} s CPU\n", threads, best_wall,
               tokens / best_wall / 1e6, best_cpu);
    if (max_threads == 1) break;
  }
  omp_set_num_threads(max_threads);
  BpeEncoder encoder(parsed, {});
  const bool apply_exact = encoder.apply(split_lines(read_utf8_file(wmt + "tok-a/newstest2017.ref.de"), LineMode::Universal)) ==
                           slurp(wmt + "bpe/newstest2017.ref.de.tok-a.bpe40000");
  all_exact &= apply_exact;
  fmt::print("apply: newstest2017.ref.de {}\n", apply_exact ? "byte-exact with subword-nmt" : "DIFFERS from subword-nmt");
  return all_exact ? 0 : 1;
}
