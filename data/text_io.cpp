#include "data/text_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

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

std::vector<std::string> read_lines(const std::string& path, bool check_encoding) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (check_encoding) check_utf8(line, path, lines.size() + 1);
    lines.push_back(std::move(line));
  }
  return lines;
}

void write_file_atomic(const std::string& path, std::string_view content) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw DataError(fmt::format("{}: cannot write (its temp file {}): {}", path, tmp, std::strerror(errno)));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw DataError(fmt::format("{}: write failed: {}", tmp, std::strerror(err)));
    }
    done += size_t(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw DataError(fmt::format("{}: fsync/close failed: {}", tmp, std::strerror(errno)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw DataError(fmt::format("{}: rename failed: {}", path, std::strerror(errno)));
  }
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
