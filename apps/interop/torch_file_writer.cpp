// A torch.save zip archive written. See torch_file_writer.hpp.
#include "apps/interop/torch_file_writer.hpp"

#include <fmt/core.h>
#include <zip.h>

#include "data/python_pickle_writer.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

using data::DataError;
using data::PickleRef;

// 1980-01-01, the earliest time a zip entry can hold: the same bytes on every run.
constexpr time_t kEntryTime = 315532800;

PickleRef int_tuple(const Shape& values) {
  std::vector<PickleRef> items;
  for (int64_t value : values) items.push_back(data::pickle_int(value));
  return data::pickle_tuple(std::move(items));
}

class ZipOutput {
 public:
  explicit ZipOutput(const std::string& path) : path_(path) {
    int error = 0;
    archive_ = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    if (!archive_) throw DataError(fmt::format("{}: cannot create the zip archive (libzip error {})", path, error));
  }
  ~ZipOutput() {
    if (archive_) zip_discard(archive_);
  }
  ZipOutput(const ZipOutput&) = delete;
  ZipOutput& operator=(const ZipOutput&) = delete;

  // Adds an entry whose bytes must stay alive until close().
  void add(const std::string& name, const void* bytes, size_t size) {
    zip_source_t* source = zip_source_buffer(archive_, bytes, size, 0);
    const zip_int64_t index = source ? zip_file_add(archive_, name.c_str(), source, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (source) zip_source_free(source);
      fail("cannot add " + name);
    }
    if (zip_set_file_compression(archive_, zip_uint64_t(index), ZIP_CM_STORE, 0) != 0 ||
        zip_file_set_mtime(archive_, zip_uint64_t(index), kEntryTime, 0) != 0)
      fail("cannot set up " + name);
  }

  void close() {
    if (zip_close(archive_) != 0) fail("cannot write the archive");
    archive_ = nullptr;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(fmt::format("{}: {}: {}", path_, what, zip_strerror(archive_)));
  }
  std::string path_;
  zip_t* archive_ = nullptr;
};

}  // namespace

PickleRef TorchFileWriter::tensor(const Tensor& tensor) {
  size_t key = 0;
  while (key < storages_.size() && !(storages_[key].source.shares_storage(tensor) &&
                                     storages_[key].source.offset() == tensor.offset() &&
                                     storages_[key].source.shape() == tensor.shape() &&
                                     storages_[key].source.strides() == tensor.strides()))
    ++key;
  if (key == storages_.size())
    storages_.push_back({tensor, tensor.to(Device::cpu()).to(DType::Float32).contiguous()});
  const PickleRef storage_id = data::pickle_persistent_id(
      data::pickle_tuple({data::pickle_string("storage"), data::pickle_global("torch", "FloatStorage"),
                          data::pickle_string(std::to_string(key)), data::pickle_string("cpu"),
                          data::pickle_int(tensor.numel())}));
  return data::pickle_object("torch._utils", "_rebuild_tensor_v2",
                             {storage_id, data::pickle_int(0), int_tuple(tensor.shape()),
                              int_tuple(contiguous_strides(tensor.shape())), data::pickle_bool(false),
                              data::pickle_ordered_dict({})});
}

void TorchFileWriter::write(const std::string& path, const data::PickleValue& root) const {
  const std::string archive = "archive";  // torch's own name for it; readers take any
  const std::string pickle = data::write_pickle(root);
  static const std::string version = "3\n", byteorder = "little";
  ZipOutput zip(path);
  zip.add(archive + "/data.pkl", pickle.data(), pickle.size());
  zip.add(archive + "/byteorder", byteorder.data(), byteorder.size());
  for (size_t key = 0; key < storages_.size(); ++key)
    zip.add(fmt::format("{}/data/{}", archive, key), storages_[key].elements.raw_data(), storages_[key].elements.nbytes());
  zip.add(archive + "/version", version.data(), version.size());
  zip.close();
}

}  // namespace attn::app
