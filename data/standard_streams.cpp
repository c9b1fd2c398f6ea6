// Standard input and output. See standard_streams.hpp.
#include "data/standard_streams.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <streambuf>

#include <fmt/core.h>

#include "data/text_io.hpp"  // DataError

namespace attn::data {

namespace {

// Standard input through read(2), whose errors std::cin's stdio layer reports as the end.
class StandardInputBuffer : public std::streambuf {
 protected:
  int_type underflow() override {
    ssize_t got = 0;
    do got = ::read(STDIN_FILENO, buffer_, sizeof buffer_);
    while (got < 0 && errno == EINTR);
    if (got < 0) throw DataError(fmt::format("standard input: read failed: {}", std::strerror(errno)));
    setg(buffer_, buffer_, buffer_ + got);
    return got == 0 ? traits_type::eof() : traits_type::to_int_type(buffer_[0]);
  }

 private:
  char buffer_[1 << 16];
};

// std::cout's writes passed on to stdio's stdout, keeping the errno of the first that fails.
class StandardOutputBuffer : public std::streambuf {
 public:
  int first_error() const { return first_error_; }

 protected:
  std::streamsize xsputn(const char* text, std::streamsize size) override {
    const size_t written = std::fwrite(text, 1, size_t(size), stdout);
    if (written != size_t(size)) keep(errno);
    return std::streamsize(written);
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char byte = traits_type::to_char_type(c);
    return xsputn(&byte, 1) == 1 ? c : traits_type::eof();
  }
  int sync() override {
    if (std::fflush(stdout) == 0) return 0;
    keep(errno);
    return -1;
  }

 private:
  void keep(int error_number) {
    if (first_error_ == 0) first_error_ = error_number;
  }
  int first_error_ = 0;
};

// Never destroyed: std::cout is flushed once more after the static objects are gone.
StandardOutputBuffer& standard_output_buffer() {
  static auto* buffer = new StandardOutputBuffer;
  return *buffer;
}

struct StandardInput {
  StandardInputBuffer buffer;
  std::istream stream{&buffer};
  StandardInput() { stream.exceptions(std::ios::badbit); }  // the buffer's DataError leaves the read
};

}  // namespace

std::istream& standard_input() {
  static StandardInput input;
  return input.stream;
}

void throw_standard_output_failed(int error_number) {
  throw DataError(fmt::format("writing standard output failed: {}",
                              error_number != 0 ? std::strerror(error_number) : "the reason was not recorded"));
}

void keep_standard_output_errors() { std::cout.rdbuf(&standard_output_buffer()); }

void check_standard_output_written() {
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_error = errno;
  if (flushed && !std::ferror(stdout) && std::cout) return;
  const int earlier_error = standard_output_buffer().first_error();
  throw_standard_output_failed(earlier_error != 0 ? earlier_error : flushed ? 0 : flush_error);
}

}  // namespace attn::data
