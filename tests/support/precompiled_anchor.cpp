// The translation unit of pbdlab_test_pch (tests/CMakeLists.txt): the test executables reuse the
// precompiled header built with it.
