// Moses input-from-sgm.perl (docs/mt-tools.md §2.5): the segments of a WMT SGML test set
// (newstest2014-deen-src.de.sgm, ...), one per line, as the GNMT recipe extracts them (§1.5 B).
// The script works on bytes, line by line (lines split on '\n'):
//   * an opening tag is `<seg` (any case) plus at least one byte up to the next '>'
//     (`<seg id="1">`; a bare `<seg>` is not one);
//   * a line that has an opening tag but no `</seg>` after it is joined with the next line
//     with nothing in between (the '\n' is dropped, no space is added);
//   * the segment is everything from the end of the first opening tag to the LAST `</seg>`
//     on the joined line, with runs of \s (\t \n \v \f \r space) made one space and one
//     leading and one trailing space removed; entities (&amp; ...) are left as they are;
//   * lines without an opening tag (<doc>, <p>, </doc>) give nothing.
// Differences from the script, for bad input only: invalid UTF-8 and a segment still open at
// the end of the input are errors naming SOURCE:LINE (the script drops such a segment), and
// a last line without '\n' is read whole (the script's chop cuts its last byte).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace attn::data {

std::vector<std::string> read_sgm_segments(std::istream& in, const std::string& source_name);

}  // namespace attn::data
