// Catch2's test runner, compiled once (catch_session.cpp) for every test program: their mains
// (catch_main.cpp, and the two of tests/cuda/) call it after their own set-up, so none of them
// compiles Catch's implementation again.
#pragma once

namespace attn::test {

// Runs the registered test cases with Catch's command line; returns the process exit code.
int run_catch_session(int argc, char** argv);

}  // namespace attn::test
