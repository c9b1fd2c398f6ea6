// Tensor files in the safetensors format (docs/design.md §4 "Checkpoints"), readable by the
// Python ecosystem (`safetensors.torch.load_file`):
//
//   [8 bytes: N, unsigned little-endian] [N bytes: JSON header] [raw little-endian data]
//
// The header maps each tensor name to {"dtype": "F32"|"F64"|"I32"|"I64"|"BOOL",
// "shape": [...], "data_offsets": [begin, end]} (byte offsets into the data section) and may
// hold "__metadata__": a map of string to string. The tensors tile the data section
// exactly, without gaps or overlaps. The writer pads the header with spaces so the data
// starts at a multiple of 8 bytes.
//
// Writing is atomic: a temp file in the same folder, fsync, rename, fsync of the folder, so
// a crash leaves either the old file or the new one, never a torn one. Reading checks every
// field and every offset: a malformed or truncated file becomes an attn::Error naming the
// file and the problem.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using TensorFileMetadata = std::map<std::string, std::string>;

struct SafetensorsFile {
  std::string path;
  NamedTensors tensors{};  // in the order of their data in the file (= save order for our files)
  TensorFileMetadata metadata{};

  bool contains(const std::string& name) const;
  // The tensor named `name`; throws attn::Error naming the file and the tensor when absent.
  const Tensor& at(const std::string& name) const;
};

// Writes the tensors (any device, any strides; stored contiguous, on CPU) and the metadata.
// Names must be unique and not "__metadata__".
void save_safetensors(const std::string& path, const NamedTensors& tensors, const TensorFileMetadata& metadata = {});
// The same file written at `path` itself (created or truncated, then fsynced), without the temp
// file and rename: for a caller that stages several files and renames them together
// (data::OutputFiles::add_written, a checkpoint's weights and JSON).
void write_safetensors_file(const std::string& path, const NamedTensors& tensors,
                            const TensorFileMetadata& metadata = {});

// Reads a whole file into fresh CPU tensors.
SafetensorsFile load_safetensors(const std::string& path);

}  // namespace attn
