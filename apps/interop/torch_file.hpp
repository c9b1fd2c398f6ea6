// Reading a file that PyTorch's `torch.save` wrote, without Python: a fairseq checkpoint
// (`model.pt`, `checkpoint_best.pt`). Two layouts exist (torch/serialization.py):
//
// * the zip archive of torch >= 1.6: ARCHIVE/data.pkl, the pickled object, and one entry
//   ARCHIVE/data/KEY per storage, its elements' raw little-endian bytes; a tensor's pickle
//   names its storage by the persistent id ('storage', TYPE, KEY, LOCATION, NUMEL);
// * the legacy stream of older versions (fairseq's published 2018–2019 models): pickles of
//   the magic number 0x1950a86a20f9469cfc6c, the protocol version 1001 and a dict of system
//   facts, then the object, then the sorted list of storage keys, then each storage as an
//   int64 element count and its bytes; its persistent ids are ('storage', TYPE, KEY,
//   LOCATION, NUMEL, VIEW), VIEW naming a part of another storage, or None.
//
// In both a tensor is pickled as torch._utils._rebuild_tensor_v2(storage, offset, size,
// stride, ...) (or _rebuild_tensor, or a Parameter around one: _rebuild_parameter), and the
// storage TYPE (torch.FloatStorage, HalfStorage, BFloat16Storage, DoubleStorage, ...) gives
// the element type. tensor() turns such a value into a float32 attnlab tensor (half, bfloat16
// and double converted), gathering it by its strides. Every size, offset and stride is checked
// against its storage: a damaged file is an error naming it, never a read out of bounds.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "core/tensor.hpp"
#include "data/python_pickle.hpp"

namespace attn::app {

class TorchFile {
 public:
  // Reads the object and the storages' places; throws data::DataError naming `path`.
  static TorchFile read(const std::string& path);
  TorchFile(TorchFile&&) noexcept;
  TorchFile& operator=(TorchFile&&) noexcept;
  ~TorchFile();

  const data::PickleValue& root() const { return *root_; }
  // Whether `value` is a pickled tensor or parameter.
  static bool is_tensor(const data::PickleValue& value);
  // Its elements as a float32 tensor; `what` names it in errors ("model entry encoder.x").
  Tensor tensor(const data::PickleValue& value, const std::string& what) const;

 private:
  TorchFile() = default;
  // The bytes of the storage `id` names: in the legacy file itself, or read from the zip archive
  // into `read` (which must outlive the view).
  std::string_view storage_bytes(const data::PickleValue& id, const std::string& what, std::string& read,
                                 std::string& type, int64_t& element_count) const;

  std::string path_;
  data::PickleRef root_;
  // Legacy: the whole file and where each storage's elements start. Zip: the entries.
  std::string legacy_bytes_;
  std::map<std::string, size_t> legacy_storage_at_;
  std::string archive_prefix_;  // zip: "ARCHIVE/"
  struct ZipArchive;
  std::unique_ptr<ZipArchive> zip_;
};

}  // namespace attn::app
