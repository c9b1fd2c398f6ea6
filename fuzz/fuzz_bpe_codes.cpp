// libFuzzer target: reading BPE codes and applying them to a line.
#include "data/bpe_apply.hpp"
#include "fuzz/fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = attn::fuzz::input_path("codes");
  return attn::fuzz::parse_input_file(data, size, path, [](const std::string& file) {
    attn::data::BpeEncoder(attn::data::BpeCodes::read(file), {}).process_line("the quick brown fox jumps\n");
  });
}
