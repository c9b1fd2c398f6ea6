// Writing a file that PyTorch's `torch.load` reads, without Python: the zip layout of
// torch >= 1.6 (torch_file.hpp describes it), as `torch.save` writes it —
//   ARCHIVE/data.pkl      the pickled object (protocol 2, data/python_pickle_writer.hpp)
//   ARCHIVE/data/KEY      each storage's elements, little-endian float32, KEY = 0, 1, ...
//   ARCHIVE/version       "3", the format's record version
//   ARCHIVE/byteorder     "little"
// every entry stored uncompressed, with a fixed time stamp (the same input writes the same
// bytes). A tensor is pickled as torch._utils._rebuild_tensor_v2(storage, 0, size, stride,
// False, OrderedDict()) with the persistent id ('storage', torch.FloatStorage, KEY, 'cpu',
// NUMEL). Tensors that share their elements (tied weights) share one storage, as torch keeps
// them.
#pragma once
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "data/python_pickle.hpp"

namespace attn::app {

class TorchFileWriter {
 public:
  // The pickled tensor, its elements kept as float32 for write().
  data::PickleRef tensor(const Tensor& tensor);
  // Writes the archive of `root` to `path` (ARCHIVE: "archive"); throws data::DataError naming
  // `path`.
  void write(const std::string& path, const data::PickleValue& root) const;

 private:
  struct Stored {
    Tensor source;    // as given, to know a tied tensor again
    Tensor elements;  // contiguous float32 on the CPU
  };
  std::vector<Stored> storages_;
};

}  // namespace attn::app
