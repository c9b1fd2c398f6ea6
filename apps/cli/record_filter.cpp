#include "apps/cli/record_filter.hpp"

#include <exception>
#include <iostream>
#include <vector>

#include "data/standard_streams.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

// Records per thread in one parallel chunk; one thread filters record by record (streaming).
constexpr size_t kRecordsPerThread = 2048;

// Reads up to `count` records; the last record of the stream keeps no '\n' when it has none.
size_t read_records(std::istream& in, const std::string& source_name, size_t first_line, size_t count,
                    std::vector<std::string>& records) {
  records.clear();
  std::string line;
  while (records.size() < count && std::getline(in, line)) {
    data::check_utf8(line, source_name, first_line + records.size());
    if (!in.eof()) line.push_back('\n');
    records.push_back(std::move(line));
  }
  return records.size();
}

void filter_in_parallel(std::vector<std::string>& records, int threads, const RecordFilter& filter) {
  std::exception_ptr failure;
  const auto n = static_cast<std::ptrdiff_t>(records.size());
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    try {
      records[i] = filter(records[i]);
    } catch (...) {
#pragma omp critical
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void run_record_filter(std::istream& in, std::ostream& out, const std::string& source_name, int threads,
                       const RecordFilter& filter) {
  const size_t chunk = threads > 1 ? kRecordsPerThread * static_cast<size_t>(threads) : 1;
  std::vector<std::string> records;
  for (size_t line = 1; read_records(in, source_name, line, chunk, records) > 0; line += records.size()) {
    if (threads > 1) {
      filter_in_parallel(records, threads, filter);
      for (const auto& r : records) out << r;
    } else {
      out << filter(records.front());
    }
  }
  out.flush();
}

void run_standard_filter(int threads, const RecordFilter& filter) {
  run_record_filter(data::standard_input(), std::cout, "<stdin>", threads, filter);
}

}  // namespace attn::app
