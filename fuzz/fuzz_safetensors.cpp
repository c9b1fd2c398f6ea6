// libFuzzer target: load_safetensors on arbitrary bytes.
#include "core/safetensors.hpp"
#include "fuzz/fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = attn::fuzz::input_path("input.safetensors");
  return attn::fuzz::parse_input_file(data, size, path, [](const std::string& file) { attn::load_safetensors(file); });
}
