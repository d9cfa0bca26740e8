#pragma once
// Reads a whole input file (scene, case, recipe, .msh) as text, or throws an InputError that
// names it: "cannot open (is a directory)", "cannot open (No such file or directory)",
// "cannot read". Header-only, so every reader layer shares it without a link dependency.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/support/input_error.hpp"

namespace pbdlab {

inline std::string readInputFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "(file)", "cannot open (is a directory)");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path, "(file)", std::string("cannot open (") + std::strerror(errno) + ")");
  std::stringstream text;
  text << file.rdbuf();
  if (file.bad()) throw InputError(path, "(file)", "cannot read");
  return text.str();
}

}  // namespace pbdlab
