// Reading text files line by line with errors that name the file and line: a missing file, a
// folder, invalid UTF-8 (with the byte offset), a read error. Writing files atomically, one or
// several together, and making the folders they go in, with errors that name them. Standard
// input and output: data/standard_streams.hpp.
#pragma once
#include <sys/types.h>

#include <fstream>
#include <functional>
#include <istream>
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
// Opens file `path` for reading (binary). Throws DataError "PATH: cannot open: REASON", or
// "PATH: is a folder, not a file" (a folder opens, and then reads as an empty file).
std::ifstream open_input_file(const std::string& path);
// Throws DataError "PATH: read failed: REASON" when reading `in` met an error rather than the
// end; called right after the read that stopped, whose errno gives the reason.
void check_read(const std::istream& in, const std::string& path);
// The whole file as bytes; errors as open_input_file and check_read give them.
std::string read_file_bytes(const std::string& path);
// All lines of a file (without '\n'; a trailing '\r' is kept), each checked for UTF-8.
std::vector<std::string> read_lines(const std::string& path, bool check_encoding = true);
// The same for the lines of `in`, named `name` in errors.
std::vector<std::string> read_lines(std::istream& in, const std::string& name, bool check_encoding = true);


// Files that one command writes together, all or none: add() writes each into a temp file
// beside it (fsync'd), commit() renames them all into place and syncs their folders, so an
// error before the commit (a bad input found late, a full disk, a folder in a file's place)
// leaves every earlier output as it was; the temp files of a set never committed are removed.
// A path that is a link is followed, so the link stays and its file is replaced; one that is
// not a regular file (/dev/null, a FIFO, a terminal) cannot be replaced and is written as it is
// at the commit. A file replaced keeps its permissions. The same file named twice is an error
// naming it.
class OutputFiles {
 public:
  OutputFiles() = default;
  ~OutputFiles();
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  void add(const std::string& path, std::string_view content);
  // Stages a file that `write` writes itself into the temp file it is given (content too large
  // to hold as a string: tensors); it must be a regular file (or none yet).
  void add_written(const std::string& path, const std::function<void(const std::string& temp)>& write);
  void commit();

 private:
  struct Output {
    std::string path;     // as the user named it, for messages
    std::string target;   // the file it names: absolute, links followed
    std::string temp;     // the staged content; empty for a file written in place
    std::string content;  // the content of a file written in place
  };
  // An output for `path` after the checks every one gets; says whether it is (or will be) a
  // regular file and the mode it keeps.
  Output checked_output(const std::string& path, bool& is_regular, mode_t& mode) const;

  std::vector<Output> outputs_;
};

// Throws DataError "OUTPUT: is also WHAT (INPUT); writing there would lose it" when `output` is
// the file `input` under any name (a link, another path): an output written over an input the
// command reads as a model (BPE codes, a vocabulary) or as its text, where no in-place edit is meant.
void refuse_output_over_input(const std::string& output, const std::string& input, std::string_view what);

// One file of its own, atomically: an OutputFiles of one.
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
