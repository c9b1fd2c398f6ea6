// safetensors reader and writer. See safetensors.hpp for the format.
#include "core/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

namespace attn {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the limit the reference implementation uses
constexpr const char* kMetadataKey = "__metadata__";

// --- dtypes ---

constexpr std::pair<DType, const char*> kDTypeCodes[] = {
    {DType::Float32, "F32"}, {DType::Float64, "F64"}, {DType::Int32, "I32"}, {DType::Int64, "I64"}, {DType::Bool, "BOOL"}};

const char* dtype_code(DType dtype) {
  for (const auto& [d, code] : kDTypeCodes)
    if (d == dtype) return code;
  throw Error(fmt::format("safetensors: no code for dtype {}", dtype_name(dtype)));
}

std::optional<DType> dtype_from_code(const std::string& code) {
  for (const auto& [d, c] : kDTypeCodes)
    if (code == c) return d;
  return std::nullopt;
}

// --- POSIX file handle ---

class File {
 public:
  File(const std::string& path, int flags, mode_t mode = 0) : path_(path), fd_(::open(path.c_str(), flags, mode)) {
    if (fd_ < 0) fail("cannot open");
  }
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  uint64_t size() const {
    struct stat st;
    if (::fstat(fd_, &st) != 0) fail("cannot stat");
    return uint64_t(st.st_size);
  }
  void read_at(void* dst, size_t nbytes, uint64_t offset) const {
    auto* out = static_cast<char*>(dst);
    while (nbytes > 0) {
      ssize_t got = ::pread(fd_, out, nbytes, off_t(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail("read failed");
      if (got == 0) throw Error(fmt::format("{}: unexpected end of file at byte {}", path_, offset));
      out += got, offset += uint64_t(got), nbytes -= size_t(got);
    }
  }
  void write_all(const void* src, size_t nbytes) {
    const auto* in = static_cast<const char*>(src);
    while (nbytes > 0) {
      ssize_t put = ::write(fd_, in, nbytes);
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) fail("write failed");
      in += put, nbytes -= size_t(put);
    }
  }
  void sync_and_close() {
    if (::fsync(fd_) != 0) fail("fsync failed");
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("close failed");
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw Error(fmt::format("{}: {}: {}", path_, what, std::strerror(errno)));
  }
  std::string path_;
  int fd_;
};

// --- reading ---

// One header entry, checked against itself (not yet against the file).
struct TensorEntry {
  std::string name;
  DType dtype{};
  Shape shape{};
  uint64_t begin = 0, end = 0;  // byte offsets into the data section
};

[[noreturn]] void malformed(const std::string& path, const std::string& problem) {
  throw Error(fmt::format("{}: malformed safetensors file: {}", path, problem));
}

uint64_t checked_mul(uint64_t a, uint64_t b, const std::string& path, const std::string& name) {
  if (a != 0 && b > UINT64_MAX / a) malformed(path, fmt::format("tensor '{}': shape too large", name));
  return a * b;
}

// A JSON parser callback noting in `duplicate` the first key that an object repeats (the
// parser itself keeps the last value silently: two tensors of one name, or two offsets).
nlohmann::json::parser_callback_t duplicate_key_finder(std::string& duplicate) {
  auto open_objects = std::make_shared<std::vector<std::set<std::string>>>();
  return [open_objects, &duplicate](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) open_objects->emplace_back();
    if (event == Event::object_end) open_objects->pop_back();
    if (event == Event::key && !open_objects->back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
}

TensorEntry parse_entry(const std::string& path, const std::string& name, const nlohmann::json& e) {
  if (!e.is_object()) malformed(path, fmt::format("tensor '{}': expected an object, got {}", name, e.dump()));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!e.contains(key)) malformed(path, fmt::format("tensor '{}': missing '{}'", name, key));

  TensorEntry entry{.name = name};
  const auto& dtype = e.at("dtype");
  std::optional<DType> parsed = dtype.is_string() ? dtype_from_code(dtype.get<std::string>()) : std::nullopt;
  if (!parsed)
    malformed(path, fmt::format("tensor '{}': unsupported dtype {} (supported: F32, F64, I32, I64, BOOL)", name,
                                dtype.dump()));
  entry.dtype = *parsed;

  const auto& shape = e.at("shape");
  if (!shape.is_array() || shape.size() > size_t(kMaxDims))
    malformed(path, fmt::format("tensor '{}': shape must be a list of at most {} sizes, got {}", name, kMaxDims,
                                shape.dump()));
  uint64_t nbytes = dtype_size(entry.dtype);
  for (const auto& extent : shape) {
    if (!extent.is_number_unsigned() || extent.get<uint64_t>() > uint64_t(INT64_MAX))
      malformed(path, fmt::format("tensor '{}': shape {} holds a non-size", name, shape.dump()));
    entry.shape.push_back(extent.get<int64_t>());
    nbytes = checked_mul(nbytes, extent.get<uint64_t>(), path, name);
  }

  const auto& offsets = e.at("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned() || offsets[0].get<uint64_t>() > offsets[1].get<uint64_t>())
    malformed(path, fmt::format("tensor '{}': data_offsets must be [begin, end] with 0 <= begin <= end, got {}", name,
                                offsets.dump()));
  entry.begin = offsets[0].get<uint64_t>();
  entry.end = offsets[1].get<uint64_t>();
  if (entry.end - entry.begin != nbytes)
    malformed(path, fmt::format("tensor '{}': shape {} of {} needs {} bytes but data_offsets {} span {}", name,
                                entry.shape.str(), dtype.get<std::string>(), nbytes, offsets.dump(),
                                entry.end - entry.begin));
  return entry;
}

TensorFileMetadata parse_metadata(const std::string& path, const nlohmann::json& m) {
  if (!m.is_object()) malformed(path, fmt::format("__metadata__ must be an object, got {}", m.dump()));
  TensorFileMetadata metadata;
  for (const auto& [key, value] : m.items()) {
    if (!value.is_string())
      malformed(path, fmt::format("__metadata__ value of '{}' must be a string, got {}", key, value.dump()));
    metadata[key] = value.get<std::string>();
  }
  return metadata;
}

// Sorts the entries by offset and checks that they tile [0, data_bytes) exactly.
void check_layout(const std::string& path, std::vector<TensorEntry>& entries, uint64_t data_bytes) {
  for (const auto& e : entries)
    if (e.end > data_bytes)
      malformed(path, fmt::format("tensor '{}': data_offsets [{}, {}] run past the {} data bytes in the file "
                                  "(truncated file?)",
                                  e.name, e.begin, e.end, data_bytes));
  std::stable_sort(entries.begin(), entries.end(),
                   [](const TensorEntry& a, const TensorEntry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  uint64_t covered = 0;
  const TensorEntry* previous = nullptr;
  for (const auto& e : entries) {
    if (e.begin < covered)
      malformed(path, fmt::format("tensor '{}' (bytes {}..{}) overlaps tensor '{}' (bytes {}..{})", e.name, e.begin,
                                  e.end, previous->name, previous->begin, previous->end));
    if (e.begin > covered)
      malformed(path, fmt::format("gap in the data: no tensor covers bytes {}..{}", covered, e.begin));
    covered = e.end;
    previous = &e;
  }
  if (covered != data_bytes)
    malformed(path, fmt::format("the tensors cover {} data bytes but the file holds {}", covered, data_bytes));
}

void check_bool_bytes(const std::string& path, const std::string& name, const Tensor& t) {
  const auto* bytes = static_cast<const uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i)
    if (bytes[i] > 1) malformed(path, fmt::format("tensor '{}': BOOL element {} has byte value {}", name, i, bytes[i]));
}

// --- writing ---

std::string build_header(const NamedTensors& tensors, const TensorFileMetadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", dtype_code(t.dtype())},
                    {"shape", t.shape().vec()},
                    {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

NamedTensors contiguous_cpu_tensors(const std::string& path, const NamedTensors& tensors) {
  std::set<std::string> seen;
  NamedTensors out;
  out.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    ATTN_CHECK(name != kMetadataKey, "{}: cannot save a tensor named '{}'", path, name);
    ATTN_CHECK(seen.insert(name).second, "{}: tensor name '{}' appears twice", path, name);
    ATTN_CHECK(t.defined(), "{}: tensor '{}' is undefined", path, name);
    out.emplace_back(name, t.to(Device::cpu()).contiguous());
  }
  return out;
}

void sync_directory(const std::string& dir) {
  File d(dir, O_RDONLY | O_DIRECTORY);
  d.sync_and_close();
}

std::string parent_directory(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

bool SafetensorsFile::contains(const std::string& name) const {
  return std::any_of(tensors.begin(), tensors.end(), [&](const auto& nt) { return nt.first == name; });
}

const Tensor& SafetensorsFile::at(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  throw Error(fmt::format("{}: no tensor named '{}'", path, name));
}

SafetensorsFile load_safetensors(const std::string& path) {
  File file(path, O_RDONLY);
  const uint64_t file_size = file.size();
  if (file_size < 8) malformed(path, fmt::format("file is {} bytes, shorter than the 8-byte header length", file_size));
  uint64_t header_bytes = 0;
  file.read_at(&header_bytes, 8, 0);
  if (header_bytes > file_size - 8)
    malformed(path, fmt::format("header length {} exceeds the {} bytes after it (truncated file?)", header_bytes,
                                file_size - 8));
  if (header_bytes > kMaxHeaderBytes)
    malformed(path, fmt::format("header length {} exceeds the {}-byte limit", header_bytes, kMaxHeaderBytes));

  std::string header_text(header_bytes, '\0');
  file.read_at(header_text.data(), header_text.size(), 8);
  nlohmann::json header;
  std::string duplicate_key;
  try {
    header = nlohmann::json::parse(header_text, duplicate_key_finder(duplicate_key));
  } catch (const nlohmann::json::exception& e) {
    malformed(path, fmt::format("header is not valid JSON: {}", e.what()));
  }
  if (!duplicate_key.empty()) malformed(path, fmt::format("header has the key '{}' twice", duplicate_key));
  if (!header.is_object()) malformed(path, "header must be a JSON object");

  SafetensorsFile result{.path = path};
  std::vector<TensorEntry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == kMetadataKey)
      result.metadata = parse_metadata(path, value);
    else
      entries.push_back(parse_entry(path, name, value));
  }
  const uint64_t data_start = 8 + header_bytes;
  check_layout(path, entries, file_size - data_start);

  result.tensors.reserve(entries.size());
  for (const auto& e : entries) {
    Tensor t(e.shape, e.dtype);
    file.read_at(t.raw_data(), t.nbytes(), data_start + e.begin);
    if (e.dtype == DType::Bool) check_bool_bytes(path, e.name, t);
    result.tensors.emplace_back(e.name, std::move(t));
  }
  return result;
}

void write_safetensors_file(const std::string& path, const NamedTensors& tensors, const TensorFileMetadata& metadata) {
  const NamedTensors contiguous = contiguous_cpu_tensors(path, tensors);
  const std::string header = build_header(contiguous, metadata);
  const uint64_t header_bytes = header.size();
  File out(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  out.write_all(&header_bytes, 8);
  out.write_all(header.data(), header.size());
  for (const auto& [name, t] : contiguous) out.write_all(t.raw_data(), t.nbytes());
  out.sync_and_close();
}

void save_safetensors(const std::string& path, const NamedTensors& tensors, const TensorFileMetadata& metadata) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  ATTN_CHECK(fd >= 0, "{}: cannot create a temp file: {}", tmp, std::strerror(errno));
  ::fchmod(fd, 0644);  // mkstemp's 0600 would make checkpoints private to their writer
  ::close(fd);
  try {
    write_safetensors_file(tmp, tensors, metadata);
    ATTN_CHECK(::rename(tmp.c_str(), path.c_str()) == 0, "{}: cannot rename {} over it: {}", path, tmp,
               std::strerror(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  sync_directory(parent_directory(path));
}

}  // namespace attn
