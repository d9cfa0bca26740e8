#pragma once
// Shared by the libFuzzer targets of fuzz/ (docs/fuzzing.md). A reader given bad bytes must
// throw pbdlab::InputError naming the file and the field; any other exception escaping it is
// a finding: the target prints it and aborts, so libFuzzer keeps the input as a crash.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/support/input_error.hpp"

namespace pbdlab::fuzz {

// The fuzzer's input as a string.
inline std::string bytes(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A fresh folder of this process under the system's temporary folder (removed at exit).
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path d =
        std::filesystem::temp_directory_path() / ("pbdlab-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("pbdlab-fuzz-" + std::to_string(::getpid())),
                                  ec);
    });
    return d;
  }();
  return dir;
}

inline void writeFile(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

// A symbolic link `link` -> `target` (replaced if present).
inline void link(const std::filesystem::path& target, const std::filesystem::path& link) {
  std::error_code ec;
  std::filesystem::create_directories(link.parent_path());
  std::filesystem::remove(link, ec);
  std::filesystem::create_directory_symlink(target, link, ec);
}

// Runs `read`: InputError is the expected answer to bad input (its file and field must be
// named); any other exception is reported and aborts.
template <typename Read>
void expectInputErrorOnly(const char* target, Read&& read) {
  try {
    read();
  } catch (const InputError& error) {
    if (error.file().empty() || error.field().empty()) {
      std::fprintf(stderr, "%s: InputError without a file or field: %s\n", target, error.what());
      std::abort();
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: not an InputError: %s\n", target, error.what());
    std::abort();
  }
}

}  // namespace pbdlab::fuzz
