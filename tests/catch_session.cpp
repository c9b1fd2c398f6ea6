// Catch2's implementation (CATCH_CONFIG_RUNNER: everything but a main), in this one file.
#define CATCH_CONFIG_RUNNER
#include <catch.hpp>

#include "catch_session.hpp"

namespace attn::test {

int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }

}  // namespace attn::test
