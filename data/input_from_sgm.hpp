// Moses input-from-sgm.perl (docs/mt-tools.md §2.5): the segments of a WMT SGML test set
// (newstest2014-deen-src.de.sgm, ...), one per line, as the GNMT recipe extracts them (§1.5 B).
// The script works on bytes, line by line (lines split on '\n'):
//   * an opening tag is `<seg` (any case) plus at least one byte up to the next '>'
//     (`<seg id="1">`; a bare `<seg>` is not one);
//   * a line that has an opening tag but no `</seg>` after it is joined with the next line
//     with nothing in between (the '\n' is dropped, no space is added);
//   * the segment is everything from the end of the opening tag to the LAST `</seg>` on the
//     joined line, with runs of \s (\t \n \v \f \r space) made one space and one leading and
//     one trailing space removed; entities (&amp; ...) are left as they are;
//   * lines without an opening tag (<doc>, <p>, </doc>) give nothing.
// Differences from the script, for bad input only, which is an error naming SOURCE:LINE where
// the script goes on silently: invalid UTF-8; a segment still open at the end of the input (the
// script drops it); a second opening tag on the joined line, i.e. a <seg> opened inside an open
// one or two segments on one line (the script outputs them as one line, the second tag and
// the first </seg> included). A last line without '\n' is read whole (the script's chop cuts
// its last byte). Time and memory are linear in the input, however many lines a segment spans.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace attn::data {

std::vector<std::string> read_sgm_segments(std::istream& in, const std::string& source_name);

}  // namespace attn::data
