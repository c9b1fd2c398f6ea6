// The object that builds the test programs' shared precompiled header (tests/CMakeLists.txt);
// it holds no code of its own.
