// remove-non-printing-char.perl: s/\p{C}/ /g on the decoded line (docs/mt-tools.md §2.5).
#include "data/remove_non_printing.hpp"

#include <cstdint>

#include <fmt/core.h>
#include <unicode/uchar.h>

#include "data/text_io.hpp"

namespace attn::data {
namespace {

// Bytes in the sequence a lead byte starts, in Perl's loose UTF-8 (up to 7 bytes, 36 bits);
// 0 for bytes that start none: continuation bytes, C0 and C1 (always overlong), FF.
int loose_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xC2) return 0;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  if (lead < 0xF8) return 4;
  if (lead < 0xFC) return 5;
  if (lead < 0xFE) return 6;
  return lead == 0xFE ? 7 : 0;
}

// The value of the sequence at s[i] and its length in bytes; length 0 when it is malformed.
struct LooseCodePoint {
  uint64_t value = 0;
  size_t length = 0;
};

LooseCodePoint decode_loose(std::string_view s, size_t i) {
  static constexpr uint64_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000, 0x200000, 0x4000000, 0x80000000};
  const auto lead = static_cast<unsigned char>(s[i]);
  const int length = loose_sequence_length(lead);
  if (length == 0 || i + length > s.size()) return {};
  uint64_t value = length == 1 ? lead : lead & (0x7F >> length);
  for (int k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(s[i + k]);
    if ((byte & 0xC0) != 0x80) return {};
    value = value << 6 | (byte & 0x3F);
  }
  if (value < kSmallest[length]) return {};  // overlong
  return {value, size_t(length)};
}

// \p{C}; a value above U+10FFFF is no Unicode character, which Perl's \p{C} matches too.
bool is_other_category(uint64_t c) {
  return c > 0x10FFFF || (U_MASK(u_charType(static_cast<UChar32>(c))) & U_GC_C_MASK) != 0;
}

}  // namespace

std::string remove_non_printing(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size();) {
    const LooseCodePoint c = decode_loose(line, i);
    if (c.length == 0) throw DataError(fmt::format("invalid UTF-8 at byte {}", i + 1));
    if (is_other_category(c.value)) out.push_back(' ');
    else out.append(line, i, c.length);  // well-formed: not a surrogate, at most U+10FFFF
    i += c.length;
  }
  return out;
}

std::string remove_non_printing_record(std::string_view record) {
  if (!record.empty() && record.back() == '\n') record.remove_suffix(1);
  return remove_non_printing(record) + '\n';
}

}  // namespace attn::data
