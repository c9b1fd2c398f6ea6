// The shared body of the libFuzzer targets (scripts/fuzz.sh, README "Fuzzing"): attnlab's
// parsers read files, so each input is written to a file of this process and parsed from
// there. A parser may accept the input or throw; an exception whose message does not name
// the file is turned into an abort, which libFuzzer reports and saves like a crash.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

namespace attn::fuzz {

// A file `name` in this process's own folder (so that parallel runs do not collide and a
// checkpoint's JSON can name its weights file by a fixed name).
inline std::string input_path(const std::string& name) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / ("attnlab-fuzz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  return (folder / name).string();
}

template <typename Parse>
int parse_input_file(const uint8_t* data, size_t size, const std::string& path, Parse parse) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  try {
    parse(path);
  } catch (const std::exception& e) {
    if (std::string(e.what()).find(path) == std::string::npos) {
      std::fprintf(stderr, "error message without the file name: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}

}  // namespace attn::fuzz
