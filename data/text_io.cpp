#include "data/text_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/core.h>

namespace attn::data {

size_t code_point_start(std::string_view s, size_t pos) {
  while (pos > 0 && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}

size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) { ++i; continue; }
    int len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return i;
    if (i + len > n) return i;
    for (int k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

void check_utf8(std::string_view s, const std::string& file, size_t line) {
  size_t bad = find_invalid_utf8(s);
  if (bad != std::string_view::npos)
    throw DataError(fmt::format("{}:{}: invalid UTF-8 at byte {}", file, line, bad + 1));
}

std::ifstream open_input_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw DataError(fmt::format("{}: is a folder, not a file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  return in;
}

void check_read(const std::istream& in, const std::string& path) {
  if (in.bad()) throw DataError(fmt::format("{}: read failed: {}", path, std::strerror(errno)));
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in = open_input_file(path);
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  check_read(in, path);
  return bytes;
}

std::vector<std::string> read_lines(const std::string& path, bool check_encoding) {
  std::ifstream in = open_input_file(path);
  return read_lines(in, path, check_encoding);
}

std::vector<std::string> read_lines(std::istream& in, const std::string& name, bool check_encoding) {
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (check_encoding) check_utf8(line, name, lines.size() + 1);
    lines.push_back(std::move(line));
  }
  check_read(in, name);
  return lines;
}

namespace {

// Writes all of `content` to the open file `fd`; returns false with errno set on an error.
bool write_all(int fd, std::string_view content) {
  for (size_t done = 0; done < content.size();) {
    const ssize_t written = ::write(fd, content.data() + done, content.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return false;
    done += size_t(written);
  }
  return true;
}

std::string temp_file_name(const std::string& target) { return target + ".tmp." + std::to_string(::getpid()); }

// Writes `content` into a new temp file beside `target` (fsync'd) with `mode`, and returns its name.
std::string write_temp_file(const std::string& path, const std::string& target, std::string_view content,
                            mode_t mode) {
  const std::string temp = temp_file_name(target);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0) throw DataError(fmt::format("{}: cannot write (its temp file {}): {}", path, temp, std::strerror(errno)));
  ::fchmod(fd, mode);  // the mode of the file it replaces, whatever the umask
  const bool written = write_all(fd, content) && ::fsync(fd) == 0;
  const int write_error = errno;
  if (::close(fd) != 0 || !written) {
    const int error = written ? errno : write_error;
    ::unlink(temp.c_str());
    throw DataError(fmt::format("{}: write failed (its temp file {}): {}", path, temp, std::strerror(error)));
  }
  return temp;
}

// Gives the temp file a writer of its own wrote `mode` and puts it on disk (fsync).
void settle_written_temp_file(const std::string& path, const std::string& temp, mode_t mode) {
  const int fd = ::open(temp.c_str(), O_WRONLY);
  if (fd < 0) throw DataError(fmt::format("{}: cannot write (its temp file {}): {}", path, temp, std::strerror(errno)));
  ::fchmod(fd, mode);  // the mode of the file it replaces, whatever the umask
  const bool synced = ::fsync(fd) == 0;
  const int sync_error = errno;
  if (::close(fd) != 0 || !synced)
    throw DataError(fmt::format("{}: write failed (its temp file {}): {}", path, temp,
                                std::strerror(synced ? errno : sync_error)));
}

// Writes `content` into an existing file that is not a regular one (a device, a FIFO).
void write_in_place(const std::string& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) throw DataError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  const bool written = write_all(fd, content);
  const int write_error = errno;
  if (::close(fd) != 0 || !written)
    throw DataError(fmt::format("{}: write failed: {}", path, std::strerror(written ? errno : write_error)));
}

// Puts the renames into `folder` on disk (best effort: a file system may not sync folders).
void sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

OutputFiles::~OutputFiles() {
  for (const Output& output : outputs_)
    if (!output.temp.empty()) ::unlink(output.temp.c_str());
}

OutputFiles::Output OutputFiles::checked_output(const std::string& path, bool& is_regular, mode_t& mode) const {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);  // links followed
  if (fs::is_directory(status)) throw DataError(fmt::format("{}: is a folder, not a file", path));
  const bool exists = fs::exists(status);
  Output output;
  output.path = path;
  output.target = fs::weakly_canonical(path, error).string();  // links followed, so one file has one name
  if (error) output.target = path;  // a link whose file is not reachable: written through it
  for (const Output& earlier : outputs_)
    if (earlier.target == output.target)
      throw DataError(fmt::format("{}: named twice as an output (also as {})", path, earlier.path));
  is_regular = !exists || fs::is_regular_file(status);
  mode = exists ? mode_t(status.permissions() & fs::perms::mask) : mode_t(0644);
  return output;
}

void OutputFiles::add(const std::string& path, std::string_view content) {
  bool is_regular = false;
  mode_t mode = 0;
  Output output = checked_output(path, is_regular, mode);
  if (is_regular)
    output.temp = write_temp_file(path, output.target, content, mode);
  else
    output.content = content;
  outputs_.push_back(std::move(output));
}

void OutputFiles::add_written(const std::string& path, const std::function<void(const std::string& temp)>& write) {
  bool is_regular = false;
  mode_t mode = 0;
  Output output = checked_output(path, is_regular, mode);
  if (!is_regular)
    throw DataError(fmt::format("{}: is not a regular file (this output is written beside it, then renamed)", path));
  output.temp = temp_file_name(output.target);
  try {
    write(output.temp);
    settle_written_temp_file(path, output.temp, mode);
  } catch (...) {
    ::unlink(output.temp.c_str());
    throw;
  }
  outputs_.push_back(std::move(output));
}

void OutputFiles::commit() {
  std::set<std::string> folders;
  for (Output& output : outputs_) {
    if (output.temp.empty()) {
      write_in_place(output.path, output.content);
      continue;
    }
    if (::rename(output.temp.c_str(), output.target.c_str()) != 0)
      throw DataError(fmt::format("{}: cannot replace it with {}: {}", output.path, output.temp, std::strerror(errno)));
    output.temp.clear();
    const std::string folder = std::filesystem::path(output.target).parent_path().string();
    folders.insert(folder.empty() ? "." : folder);
  }
  outputs_.clear();
  for (const std::string& folder : folders) sync_folder(folder);
}

void refuse_output_over_input(const std::string& output, const std::string& input, std::string_view what) {
  std::error_code error;  // either missing: not the same file
  if (!output.empty() && !input.empty() && std::filesystem::equivalent(output, input, error))
    throw DataError(fmt::format("{}: is also {} ({}); writing there would lose it", output, what, input));
}

void write_file_atomic(const std::string& path, std::string_view content) {
  OutputFiles file;
  file.add(path, content);
  file.commit();
}

void create_folders(const std::string& path, std::string_view what) {
  if (path.empty()) return;  // the parent of a bare file name: the current folder
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) throw DataError(fmt::format("{} ({}): cannot create the folder: {}", path, what, error.message()));
}

size_t cut_partial_last_line(const std::string& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size == 0) return 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open", path));
  // Back from the end, a block at a time, to the last newline.
  constexpr uintmax_t kBlock = 4096;
  std::string block;
  for (uintmax_t end = size; end > 0;) {
    const uintmax_t begin = end > kBlock ? end - kBlock : 0;
    block.resize(size_t(end - begin));
    in.seekg(std::streamoff(begin));
    if (!in.read(block.data(), std::streamsize(block.size()))) throw DataError(fmt::format("{}: read failed", path));
    if (const size_t newline = block.rfind('\n'); newline != std::string::npos) {
      const uintmax_t whole = begin + newline + 1;
      if (whole < size) std::filesystem::resize_file(path, whole);
      return size_t(size - whole);
    }
    end = begin;
  }
  std::filesystem::resize_file(path, 0);  // one partial line and nothing else
  return size_t(size);
}

}  // namespace attn::data
