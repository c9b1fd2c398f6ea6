// Standard input and output with their read and write errors reported: a read error is not
// taken for the end of the input, and a failed write says why.
#pragma once
#include <istream>

namespace attn::data {

// Standard input, read with read(2): a read error (EIO, a closed descriptor) throws DataError
// "standard input: read failed: REASON" out of the read that met it. std::cin, through stdio,
// ends at a read error as at the end of the input, so a filter would print the part before it
// and exit 0. Every command that reads standard input reads it here.
std::istream& standard_input();
// Throws DataError "writing standard output failed: REASON", REASON strerror(error_number).
[[noreturn]] void throw_standard_output_failed(int error_number);
// Makes std::cout keep the errno of its first write that fails. It still writes through stdio's
// stdout, in order with fmt::print and printf; alone it would only go bad, and by the time that
// is noticed the reason is gone (stdio drops the bytes it could not write, and later calls
// reuse errno).
void keep_standard_output_errors();
// Writes out what stdout still holds; throws throw_standard_output_failed's error when that, or
// an earlier write through std::cout, failed, with the first failure's reason.
void check_standard_output_written();

}  // namespace attn::data
