// Errors raised by attnlab. Every bad input becomes an attnlab::Error with a message that
// names the problem (shapes, dtypes, indices, file:line) — never a crash.
#pragma once
#include <stdexcept>
#include <string>
#include <fmt/core.h>

namespace attn {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ATTN_CHECK(cond, "format {}", args...) throws attn::Error with the formatted message.
#define ATTN_CHECK(cond, ...)                                  \
  do {                                                         \
    if (!(cond)) throw ::attn::Error(::fmt::format(__VA_ARGS__)); \
  } while (0)

}  // namespace attn
