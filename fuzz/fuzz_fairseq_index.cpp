// libFuzzer target: a fairseq index (.idx) of the mmap format (data/fairseq_mmap_index.hpp) or
// the lazy/cached one (data/fairseq_lazy_index.hpp), as its magic says, beside a fixed 256-byte
// .bin, opened as a binarized corpus and every sentence read. 256 bytes hold a whole number of
// ids of every type, so an index of the right lengths reaches the id checks.
#include "data/binarized_corpus.hpp"
#include "fuzz/fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string bin = [] {
    const std::string path = attn::fuzz::input_path("input.bin");
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    for (int byte = 0; byte < 256; ++byte) out.put(char(byte % 2 ? 0 : byte % 64 + 2));
    return path;
  }();
  static const std::string index = attn::fuzz::input_path("input.idx");
  return attn::fuzz::parse_input_file(data, size, index, [](const std::string&) {
    const attn::data::BinarizedCorpus corpus = attn::data::BinarizedCorpus::open(bin);
    for (size_t i = 0; i < corpus.size(); ++i) corpus.sentence(i);
  });
}
