// libFuzzer target: the JSON of a checkpoint (its weights file a fixed valid one, so that
// the JSON's own fields are what the fuzzer explores: a wrong checksum ends early, as it must).
#include "apps/training/checkpoint.hpp"
#include "fuzz/fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base = [] {
    const std::string name = attn::fuzz::input_path("checkpoint");
    attn::app::CheckpointContent content;
    content.model = {{"weight", attn::from_vector<float>({0.5f, 1.0f}, {2})}};
    content.metadata = {{"epoch", 1}};
    attn::app::save_checkpoint(name, content);
    return name;
  }();
  return attn::fuzz::parse_input_file(data, size, attn::app::metadata_path(base),
                                      [](const std::string&) { attn::app::load_checkpoint(base, false); });
}
