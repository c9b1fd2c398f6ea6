// The main of every test program that needs no set-up of its own (catch_session.hpp).
#include "catch_session.hpp"

int main(int argc, char** argv) { return attn::test::run_catch_session(argc, argv); }
