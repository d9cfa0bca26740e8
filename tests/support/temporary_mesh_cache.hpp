#pragma once
// Scenes load their meshes through the mesh cache (PBDLAB_CACHE_DIR): a test binary that
// includes this header uses a temporary cache folder of its own (removed at the end), never
// the user's. Include it in one source file of the binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace pbdlab::test {

class TemporaryMeshCache : public ::testing::Environment {
 public:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("pbdlab_test_mesh_cache_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    ::setenv("PBDLAB_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::filesystem::path dir_;
};

namespace {
const ::testing::Environment* const kTemporaryMeshCache = ::testing::AddGlobalTestEnvironment(new TemporaryMeshCache);
}  // namespace

}  // namespace pbdlab::test
