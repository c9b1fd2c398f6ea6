#include "data/perl_unicode.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include <fmt/core.h>
#include <unicode/uchar.h>

#include "data/text_io.hpp"

namespace attn::data::perl {
namespace {

enum ClassBit : uint8_t {
  kAlpha = 1, kDecimal = 2, kNumber = 4, kLower = 8, kCurrency = 16, kSpace = 32, kLowercaseLetter = 64,
};

// Perl 5.36 answers from Unicode 14, ICU 72 from Unicode 15, which made ten characters of
// Unicode 14 Alphabetic or Lowercase (Other_Alphabetic / Other_Lowercase additions). Perl does
// not see those properties, so the tokenizer must not either: U+0F82 is padded like any other
// mark, and U+A7F2 does not count as a lowercase first letter.
uint8_t unicode15_additions(char32_t c) {
  switch (c) {
    case 0x0C04: case 0x0F82: case 0x0F83: case 0x11080: case 0x11081:
      return kAlpha;
    case 0x10FC: case 0xA7F2: case 0xA7F3: case 0xA7F4: case 0xAB69:
      return kLower;
    default:
      return 0;
  }
}

uint8_t classes_from_icu(char32_t c) {
  auto cp = static_cast<UChar32>(c);
  int32_t category_mask = U_MASK(u_charType(cp));
  uint8_t bits = 0;
  if (u_hasBinaryProperty(cp, UCHAR_ALPHABETIC)) bits |= kAlpha;
  if (category_mask & U_GC_ND_MASK) bits |= kDecimal;
  if (category_mask & U_GC_N_MASK) bits |= kNumber;
  if (u_hasBinaryProperty(cp, UCHAR_LOWERCASE)) bits |= kLower;
  if (category_mask & U_GC_SC_MASK) bits |= kCurrency;
  if (category_mask & U_GC_LL_MASK) bits |= kLowercaseLetter;
  if (u_hasBinaryProperty(cp, UCHAR_WHITE_SPACE)) bits |= kSpace;
  return bits & ~unicode15_additions(c);
}

// The Basic Multilingual Plane is tabulated once; rarer code points ask ICU directly.
constexpr char32_t kTableSize = 0x10000;

const std::array<uint8_t, kTableSize>& bmp_table() {
  static const auto table = [] {
    std::array<uint8_t, kTableSize> t{};
    for (char32_t c = 0; c < kTableSize; ++c) t[c] = classes_from_icu(c);
    return t;
  }();
  return table;
}

uint8_t classes(char32_t c) { return c < kTableSize ? bmp_table()[c] : classes_from_icu(c); }

}  // namespace

std::u32string decode_utf8(std::string_view s, std::string_view what) {
  size_t bad = find_invalid_utf8(s);
  if (bad != std::string_view::npos)
    throw DataError(fmt::format("{}: invalid UTF-8 at byte {}", what, bad + 1));
  std::u32string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0, n = s.size(); i < n;) {
    unsigned char lead = p[i];
    int length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    char32_t c = length == 1 ? lead : length == 2 ? lead & 0x1F : length == 3 ? lead & 0x0F : lead & 0x07;
    for (int k = 1; k < length; ++k) c = (c << 6) | (p[i + k] & 0x3F);
    out.push_back(c);
    i += length;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string encode_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

void replace_all(std::u32string& text, std::u32string_view from, std::u32string_view to) {
  size_t at = text.find(from);
  if (at == std::u32string::npos) return;
  std::u32string out;
  size_t start = 0;
  for (; at != std::u32string::npos; at = text.find(from, start)) {
    out.append(text, start, at - start).append(to);
    start = at + from.size();
  }
  out.append(text, start);
  text = std::move(out);
}

void squeeze_spaces(std::u32string& text) {
  auto both_spaces = [](char32_t a, char32_t b) { return a == U' ' && b == U' '; };
  text.erase(std::unique(text.begin(), text.end(), both_spaces), text.end());
  if (!text.empty() && text.front() == U' ') text.erase(text.begin());
  if (!text.empty() && text.back() == U' ') text.pop_back();
}

bool is_alpha(char32_t c) { return classes(c) & kAlpha; }
bool is_alnum(char32_t c) { return classes(c) & (kAlpha | kDecimal); }
bool is_number(char32_t c) { return classes(c) & kNumber; }
bool is_lower(char32_t c) { return classes(c) & kLower; }
bool is_lowercase_letter(char32_t c) { return classes(c) & kLowercaseLetter; }
bool is_currency(char32_t c) { return classes(c) & kCurrency; }
bool is_space(char32_t c) { return classes(c) & kSpace; }

bool is_blank(std::u32string_view s) {
  for (char32_t c : s)
    if (!is_space(c)) return false;
  return true;
}

}  // namespace attn::data::perl
