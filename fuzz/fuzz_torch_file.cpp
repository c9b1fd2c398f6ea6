// libFuzzer target: a file read as a fairseq checkpoint that torch.save wrote (zip archive or
// legacy stream; apps/interop/fairseq_checkpoint.hpp), its pickle run and every weight read.
#include "apps/interop/fairseq_checkpoint.hpp"
#include "fuzz/fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = attn::fuzz::input_path("model.pt");
  return attn::fuzz::parse_input_file(data, size, path,
                                      [](const std::string& file) { attn::app::read_fairseq_checkpoint(file); });
}
