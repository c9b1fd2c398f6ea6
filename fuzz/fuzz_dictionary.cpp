// libFuzzer target: loading a fairseq dict.txt and encoding a line with it.
#include "data/dictionary.hpp"
#include "fuzz/fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = attn::fuzz::input_path("dict.txt");
  return attn::fuzz::parse_input_file(data, size, path, [](const std::string& file) {
    attn::data::Dictionary::load(file).encode_line("the house , a b");
  });
}
