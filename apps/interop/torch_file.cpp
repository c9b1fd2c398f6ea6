// Reading torch.save's files. See torch_file.hpp.
#include "apps/interop/torch_file.hpp"

#include <zip.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/core.h>

#include "core/bfloat16.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

using data::DataError;
using data::PickleValue;
using Kind = PickleValue::Kind;

// The pickle protocol 2 bytes of torch's legacy magic number 0x1950a86a20f9469cfc6c: PROTO 2,
// LONG1 of 10 little-endian bytes, STOP.
constexpr std::string_view kLegacyMagicPickle{"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15};
constexpr int64_t kLegacyProtocolVersion = 1001;

enum class Element { Float32, Float16, BFloat16, Float64, Integer };

struct StorageType {
  Element element;
  size_t bytes;
};

// torch's typed storage classes, by name.
std::optional<StorageType> storage_type(const std::string& name) {
  static const std::map<std::string, StorageType> types = {
      {"FloatStorage", {Element::Float32, 4}},     {"HalfStorage", {Element::Float16, 2}},
      {"BFloat16Storage", {Element::BFloat16, 2}}, {"DoubleStorage", {Element::Float64, 8}},
      {"LongStorage", {Element::Integer, 8}},      {"IntStorage", {Element::Integer, 4}},
      {"ShortStorage", {Element::Integer, 2}},     {"CharStorage", {Element::Integer, 1}},
      {"ByteStorage", {Element::Integer, 1}},      {"BoolStorage", {Element::Integer, 1}}};
  const auto found = types.find(name);
  return found == types.end() ? std::nullopt : std::optional(found->second);
}

// IEEE 754 binary16 to float.
float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h >> 15) << 31, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  const float magnitude = std::ldexp(float(mantissa), -24);  // subnormal (or zero)
  return sign ? -magnitude : magnitude;
}

float element_value(const unsigned char* at, Element element) {
  uint64_t raw = 0;
  const size_t bytes = element == Element::Float64 ? 8 : element == Element::Float32 ? 4 : 2;
  for (size_t i = 0; i < bytes; ++i) raw |= uint64_t(at[i]) << (8 * i);
  switch (element) {
    case Element::Float32: return std::bit_cast<float>(uint32_t(raw));
    case Element::Float16: return half_to_float(uint16_t(raw));
    case Element::BFloat16: return bfloat16_to_float(uint16_t(raw));
    case Element::Float64: return float(std::bit_cast<double>(raw));
    case Element::Integer: break;
  }
  return 0.0f;
}

// The persistent ids of storages in the tree under `root` (each value visited once).
void collect_storage_ids(const data::PickleRef& root, std::vector<const PickleValue*>& ids) {
  std::set<const PickleValue*> seen;
  std::vector<const PickleValue*> pending = {root.get()};
  while (!pending.empty()) {
    const PickleValue* value = pending.back();
    pending.pop_back();
    if (!value || !seen.insert(value).second) continue;
    if (value->is(Kind::PersistentId)) ids.push_back(value);
    for (const data::PickleRef& item : value->items) pending.push_back(item.get());
    for (const auto& [k, v] : value->entries) pending.insert(pending.end(), {k.get(), v.get()});
    pending.push_back(value->state.get());
  }
}

// The fields of a storage's persistent id: ('storage', TYPE, KEY, LOCATION, NUMEL[, VIEW]).
struct StorageId {
  std::string type, key;
  int64_t element_count = 0;
  const PickleValue* view = nullptr;  // legacy: (VIEW_KEY, OFFSET, SIZE), or null
};

StorageId parse_storage_id(const PickleValue& id, const std::string& what) {
  const PickleValue* tuple = id.state.get();
  const bool shaped = tuple && tuple->is(Kind::Tuple) && tuple->items.size() >= 5 &&
                      tuple->items[0]->is(Kind::String) && tuple->items[0]->text == "storage" &&
                      tuple->items[1]->is(Kind::Global) && tuple->items[2]->is(Kind::String) &&
                      tuple->items[4]->is(Kind::Int) && tuple->items[4]->integer >= 0;
  if (!shaped)
    throw DataError(fmt::format("{}: a persistent id that is no ('storage', TYPE, KEY, LOCATION, NUMEL)", what));
  StorageId parsed{tuple->items[1]->name, tuple->items[2]->text, tuple->items[4]->integer};
  if (tuple->items.size() > 5 && !tuple->items[5]->is(Kind::None)) parsed.view = tuple->items[5].get();
  return parsed;
}

std::vector<int64_t> int_tuple(const PickleValue& value, const std::string& what, const char* field) {
  if (!value.is(Kind::Tuple)) throw DataError(fmt::format("{}: its {} is no tuple", what, field));
  std::vector<int64_t> numbers;
  for (const data::PickleRef& item : value.items) {
    if (!item->is(Kind::Int) || item->integer < 0)
      throw DataError(fmt::format("{}: its {} holds something other than a count >= 0", what, field));
    numbers.push_back(item->integer);
  }
  return numbers;
}

// Whether the file begins as a zip archive does (a local file header).
bool starts_with_zip_magic(const std::string& path) {
  std::ifstream in = data::open_input_file(path);
  char magic[4] = {};
  in.read(magic, sizeof magic);
  return in.gcount() == 4 && std::string_view(magic, 4) == "PK\x03\x04";
}

}  // namespace

struct TorchFile::ZipArchive {
  zip_t* archive = nullptr;
  ~ZipArchive() {
    if (archive) zip_discard(archive);
  }
  // The bytes of entry `name`; throws naming the file when it is missing or unreadable.
  std::string entry(const std::string& name, const std::string& path) const {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat(archive, name.c_str(), 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE))
      throw DataError(fmt::format("{}: the archive has no entry {}", path, name));
    std::string bytes(size_t(stat.size), '\0');
    zip_file_t* file = zip_fopen(archive, name.c_str(), 0);
    const zip_int64_t read = file ? zip_fread(file, bytes.data(), stat.size) : -1;
    if (file) zip_fclose(file);
    if (read < 0 || zip_uint64_t(read) != stat.size)
      throw DataError(fmt::format("{}: cannot read its entry {} (a damaged archive?)", path, name));
    return bytes;
  }
};

TorchFile::TorchFile(TorchFile&&) noexcept = default;
TorchFile& TorchFile::operator=(TorchFile&&) noexcept = default;
TorchFile::~TorchFile() = default;

TorchFile TorchFile::read(const std::string& path) {
  TorchFile file;
  file.path_ = path;
  if (starts_with_zip_magic(path)) {
    file.zip_ = std::make_unique<ZipArchive>();
    int error = 0;
    file.zip_->archive = zip_open(path.c_str(), ZIP_RDONLY, &error);
    if (!file.zip_->archive)
      throw DataError(fmt::format("{}: not a zip archive it can read (libzip error {})", path, error));
    for (zip_int64_t i = 0; i < zip_get_num_entries(file.zip_->archive, 0); ++i) {
      const std::string name = zip_get_name(file.zip_->archive, zip_uint64_t(i), 0);
      if (name.ends_with("data.pkl") && std::count(name.begin(), name.end(), '/') == 1)
        file.archive_prefix_ = name.substr(0, name.size() - std::string("data.pkl").size());
    }
    if (file.archive_prefix_.empty())
      throw DataError(fmt::format("{}: a zip archive without ARCHIVE/data.pkl: not a torch.save file", path));
    const std::string pickle = file.zip_->entry(file.archive_prefix_ + "data.pkl", path);
    file.root_ = data::read_pickle(pickle, path + " (data.pkl)");
    return file;
  }
  std::string head = data::read_file_bytes(path);
  if (!head.starts_with(kLegacyMagicPickle))
    throw DataError(fmt::format("{}: neither a zip archive nor torch's legacy format: not a torch.save file", path));
  size_t at = kLegacyMagicPickle.size(), used = 0;
  auto next_pickle = [&](const char* part) {
    data::PickleRef value =
        data::read_pickle(std::string_view(head).substr(at), fmt::format("{} ({})", path, part), &used);
    at += used;
    return value;
  };
  const data::PickleRef version = next_pickle("protocol version");
  if (!version->is(Kind::Int) || version->integer != kLegacyProtocolVersion)
    throw DataError(fmt::format("{}: legacy protocol version {}, not {}", path,
                                version->is(Kind::Int) ? std::to_string(version->integer) : "?",
                                kLegacyProtocolVersion));
  next_pickle("system information");
  file.root_ = next_pickle("object");
  const data::PickleRef keys = next_pickle("storage keys");
  // Each storage's element size, from the ids that name it.
  std::vector<const PickleValue*> ids;
  collect_storage_ids(file.root_, ids);
  std::map<std::string, size_t> element_bytes;
  for (const PickleValue* id : ids) {
    const StorageId parsed = parse_storage_id(*id, path);
    const std::optional<StorageType> type = storage_type(parsed.type);
    if (!type) throw DataError(fmt::format("{}: storage type {} is not one it knows", path, parsed.type));
    element_bytes[parsed.key] = type->bytes;
  }
  if (!keys->is(Kind::List)) throw DataError(fmt::format("{}: the storage keys are no list", path));
  for (const data::PickleRef& key : keys->items) {
    if (!key->is(Kind::String) || !element_bytes.contains(key->text))
      throw DataError(fmt::format("{}: a storage key that no tensor names", path));
    if (head.size() - at < 8) throw DataError(fmt::format("{}: truncated in storage {}", path, key->text));
    uint64_t count = 0;
    for (size_t i = 0; i < 8; ++i) count |= uint64_t(static_cast<unsigned char>(head[at + i])) << (8 * i);
    at += 8;
    const size_t bytes = element_bytes[key->text];
    if (count > (head.size() - at) / bytes)
      throw DataError(fmt::format("{}: truncated in storage {}", path, key->text));
    file.legacy_storage_at_[key->text] = at;
    at += size_t(count) * bytes;
  }
  file.legacy_bytes_ = std::move(head);
  return file;
}

bool TorchFile::is_tensor(const PickleValue& value) {
  if (!value.is(Kind::Object) || value.module != "torch._utils") return false;
  return value.name == "_rebuild_tensor_v2" || value.name == "_rebuild_tensor" || value.name == "_rebuild_parameter";
}

std::string_view TorchFile::storage_bytes(const PickleValue& id, const std::string& what, std::string& read,
                                          std::string& type, int64_t& element_count) const {
  const StorageId parsed = parse_storage_id(id, fmt::format("{}: {}", path_, what));
  type = parsed.type;
  element_count = parsed.element_count;
  if (zip_) {
    read = zip_->entry(archive_prefix_ + "data/" + parsed.key, path_);
    const std::optional<StorageType> known = storage_type(type);
    if (known && read.size() != size_t(element_count) * known->bytes)
      throw DataError(fmt::format("{}: storage {} holds {} bytes, not the {} of its {} elements", path_, parsed.key,
                                  read.size(), size_t(element_count) * known->bytes, element_count));
    return read;
  }
  // Legacy: the storage itself, or a view into another (VIEW_KEY, OFFSET, SIZE) in elements.
  std::string key = parsed.key;
  int64_t offset = 0;
  if (parsed.view) {
    const PickleValue& view = *parsed.view;
    if (!view.is(Kind::Tuple) || view.items.size() != 3 || !view.items[0]->is(Kind::String) ||
        !view.items[1]->is(Kind::Int) || !view.items[2]->is(Kind::Int) || view.items[1]->integer < 0 ||
        view.items[2]->integer < 0)
      throw DataError(fmt::format("{}: {}: a storage view that is no (KEY, OFFSET, SIZE)", path_, what));
    key = view.items[0]->text;
    offset = view.items[1]->integer;
    element_count = view.items[2]->integer;
  }
  const auto found = legacy_storage_at_.find(key);
  const std::optional<StorageType> known = storage_type(type);
  if (found == legacy_storage_at_.end() || !known)
    throw DataError(fmt::format("{}: {}: no storage {}", path_, what, key));
  const size_t start = found->second + size_t(offset) * known->bytes, bytes = size_t(element_count) * known->bytes;
  if (start > legacy_bytes_.size() || bytes > legacy_bytes_.size() - start)
    throw DataError(fmt::format("{}: {}: its storage runs past the end of the file", path_, what));
  return std::string_view(legacy_bytes_).substr(start, bytes);
}

Tensor TorchFile::tensor(const PickleValue& value, const std::string& what) const {
  const std::string named = fmt::format("{}: {}", path_, what);
  if (!is_tensor(value)) throw DataError(fmt::format("{} is no tensor", named));
  const std::vector<data::PickleRef>& args = value.items;
  if (value.name == "_rebuild_parameter") {
    if (args.empty()) throw DataError(fmt::format("{}: a parameter without its tensor", named));
    return tensor(*args[0], what);
  }
  if (args.size() < 4 || !args[0]->is(Kind::PersistentId) || !args[1]->is(Kind::Int) || args[1]->integer < 0)
    throw DataError(fmt::format("{}: a tensor that is no (storage, offset, size, stride, ...)", named));
  std::string type;
  int64_t element_count = 0;
  std::string read;  // a zip archive's storage
  const std::string_view bytes = storage_bytes(*args[0], what, read, type, element_count);
  const std::optional<StorageType> storage = storage_type(type);
  if (!storage) throw DataError(fmt::format("{}: storage type {} is not one it knows", named, type));
  if (storage->element == Element::Integer)
    throw DataError(fmt::format("{}: holds integers ({}), not weights", named, type));
  const std::vector<int64_t> size = int_tuple(*args[2], named, "size"), stride = int_tuple(*args[3], named, "stride");
  if (size.size() != stride.size())
    throw DataError(fmt::format("{}: {} sizes but {} strides", named, size.size(), stride.size()));
  // The last element it reaches must lie in the storage (every count and stride >= 0).
  __int128 last = args[1]->integer, count = 1;
  for (size_t d = 0; d < size.size(); ++d) {
    count *= size[d];
    if (size[d] > 0) last += __int128(size[d] - 1) * stride[d];
    if (count > (__int128(1) << 40))
      throw DataError(fmt::format("{}: {} elements is more than it reads", named, int64_t(count)));
  }
  if (count > 0 && last >= element_count)
    throw DataError(fmt::format("{}: reaches element {} of a storage of {}", named, int64_t(last), element_count));
  Tensor out = empty(Shape(size), DType::Float32);
  float* to = out.data<float>();
  const auto* from = reinterpret_cast<const unsigned char*>(bytes.data());
  std::vector<int64_t> index(size.size(), 0);
  for (int64_t n = 0; n < int64_t(count); ++n) {
    int64_t at = args[1]->integer;
    for (size_t d = 0; d < size.size(); ++d) at += index[d] * stride[d];
    to[n] = element_value(from + size_t(at) * storage->bytes, storage->element);
    for (size_t d = size.size(); d-- > 0;) {  // the next index, last dimension fastest
      if (++index[d] < size[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace attn::app
