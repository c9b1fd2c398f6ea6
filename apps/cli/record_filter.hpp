// Runs a per-line text filter (tokenize, detokenize, the cleaning scripts) over a stream the way
// the Moses Perl scripts read it: records split on '\n' only, each passed with its '\n' (the
// last one may lack it), each checked for UTF-8 first unless the filter takes any bytes. Errors
// name SOURCE:LINE, a filter's DataError too. With threads > 1 chunks of records are filtered in
// parallel; output always keeps the input order.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace attn::app {

using RecordFilter = std::function<std::string(std::string_view record)>;

// What a record must be before the filter sees it: valid UTF-8, or whatever bytes it holds (for
// the scripts that read bytes, or decode more loosely than UTF-8 allows).
enum class RecordBytes { kUtf8, kAny };

void run_record_filter(std::istream& in, std::ostream& out, const std::string& source_name, int threads,
                       const RecordFilter& filter, RecordBytes bytes = RecordBytes::kUtf8);

// run_record_filter from standard input ("<stdin>" in errors; a read error is an error, not its
// end: data::standard_input) to standard output.
void run_standard_filter(int threads, const RecordFilter& filter, RecordBytes bytes = RecordBytes::kUtf8);

}  // namespace attn::app
