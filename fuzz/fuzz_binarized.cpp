// libFuzzer target: opening a binarized corpus and reading every sentence.
#include "data/binarized_corpus.hpp"
#include "fuzz/fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = attn::fuzz::input_path("input.bin");
  return attn::fuzz::parse_input_file(data, size, path, [](const std::string& file) {
    const attn::data::BinarizedCorpus corpus = attn::data::BinarizedCorpus::open(file);
    for (size_t i = 0; i < corpus.size(); ++i) corpus.sentence(i);
  });
}
