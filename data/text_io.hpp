// Reading text files line by line with errors that name the file and line: a missing file,
// invalid UTF-8 (with the byte offset), parallel files whose line counts differ. Writing files
// atomically, and making the folders they go in, with errors that name them.
#pragma once
#include <string>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace attn::data {

// Throws attn::data::DataError.
struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Position of the first invalid UTF-8 byte in s, or std::string_view::npos when valid.
size_t find_invalid_utf8(std::string_view s);
// The first byte of the code point that holds byte `pos` of UTF-8 text s (pos < s.size()):
// back over continuation bytes, never before 0.
size_t code_point_start(std::string_view s, size_t pos);
// Throws DataError "FILE:LINE: invalid UTF-8 at byte N" when s is not valid UTF-8.
void check_utf8(std::string_view s, const std::string& file, size_t line);
// All lines of a file (without '\n'; a trailing '\r' is kept), each checked for UTF-8.
std::vector<std::string> read_lines(const std::string& path, bool check_encoding = true);
// Writes `content` to path atomically: a temp file in the same folder, fsync, rename.
void write_file_atomic(const std::string& path, std::string_view content);
// Creates folder `path` and its missing parents; "" (the folder of a bare file name) is the
// current folder, which exists. Throws DataError "PATH (WHAT): cannot create
// the folder: REASON", where `what` says who named it (a flag such as "--out", or "save dir").
void create_folders(const std::string& path, std::string_view what);
// An append-only log whose writer died mid-record (power loss, a full disk) ends without a
// newline: cuts that partial last line, so the next record starts a line of its own and every
// line stays whole. Returns the bytes removed (0 for a whole or missing file).
size_t cut_partial_last_line(const std::string& path);

}  // namespace attn::data
