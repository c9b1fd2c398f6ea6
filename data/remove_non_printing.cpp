// remove-non-printing-char.perl: s/\p{C}/ /g on the decoded line (docs/mt-tools.md §2.5).
#include "data/remove_non_printing.hpp"

#include <unicode/uchar.h>

#include "data/perl_unicode.hpp"

namespace attn::data {
namespace {

bool is_other_category(char32_t c) {
  return (U_MASK(u_charType(static_cast<UChar32>(c))) & U_GC_C_MASK) != 0;
}

}  // namespace

std::string remove_non_printing(std::string_view line, std::string_view what) {
  std::string out;
  out.reserve(line.size());
  for (char32_t c : perl::decode_utf8(line, what)) perl::append_utf8(out, is_other_category(c) ? U' ' : c);
  return out;
}

std::string remove_non_printing_record(std::string_view record, std::string_view what) {
  if (!record.empty() && record.back() == '\n') record.remove_suffix(1);
  return remove_non_printing(record, what) + '\n';
}

}  // namespace attn::data
