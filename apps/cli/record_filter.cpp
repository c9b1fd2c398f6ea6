#include "apps/cli/record_filter.hpp"

#include <exception>
#include <iostream>
#include <vector>

#include <fmt/core.h>

#include "data/standard_streams.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

// Records per thread in one parallel chunk; one thread filters record by record (streaming).
constexpr size_t kRecordsPerThread = 2048;

// Reads up to `count` records; the last record of the stream keeps no '\n' when it has none.
size_t read_records(std::istream& in, const std::string& source_name, size_t first_line, size_t count,
                    RecordBytes bytes, std::vector<std::string>& records) {
  records.clear();
  std::string line;
  while (records.size() < count && std::getline(in, line)) {
    if (bytes == RecordBytes::kUtf8) data::check_utf8(line, source_name, first_line + records.size());
    if (!in.eof()) line.push_back('\n');
    records.push_back(std::move(line));
  }
  return records.size();
}

// The filter's output for the record of line `line`; a DataError it throws names SOURCE:LINE.
std::string filter_record(const RecordFilter& filter, const std::string& record, const std::string& source_name,
                          size_t line) {
  try {
    return filter(record);
  } catch (const data::DataError& error) {
    throw data::DataError(fmt::format("{}:{}: {}", source_name, line, error.what()));
  }
}

// Filters the records of lines first_line... in place; of several failures, the first line's
// is thrown, as one thread would.
void filter_in_parallel(std::vector<std::string>& records, int threads, const RecordFilter& filter,
                        const std::string& source_name, size_t first_line) {
  std::exception_ptr failure;
  const auto n = static_cast<std::ptrdiff_t>(records.size());
  std::ptrdiff_t failed_at = n;
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    try {
      records[i] = filter_record(filter, records[i], source_name, first_line + size_t(i));
    } catch (...) {
#pragma omp critical
      if (i < failed_at) {
        failed_at = i;
        failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void run_record_filter(std::istream& in, std::ostream& out, const std::string& source_name, int threads,
                       const RecordFilter& filter, RecordBytes bytes) {
  const size_t chunk = threads > 1 ? kRecordsPerThread * static_cast<size_t>(threads) : 1;
  std::vector<std::string> records;
  for (size_t line = 1; read_records(in, source_name, line, chunk, bytes, records) > 0; line += records.size()) {
    if (threads > 1) {
      filter_in_parallel(records, threads, filter, source_name, line);
      for (const auto& r : records) out << r;
    } else {
      out << filter_record(filter, records.front(), source_name, line);
    }
  }
  out.flush();
}

void run_standard_filter(int threads, const RecordFilter& filter, RecordBytes bytes) {
  run_record_filter(data::standard_input(), std::cout, "<stdin>", threads, filter, bytes);
}

}  // namespace attn::app
