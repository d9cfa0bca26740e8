#include "core/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace pbdlab {

void writeFileAtomically(const std::string& path, const std::string& contents) {
  if (path.empty()) throw std::runtime_error("writeFileAtomically: empty output path");
  // Same folder as the target, so the rename stays on one file system and is atomic.
  const std::string temp = path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  auto fail = [&](const std::string& what, int err) {
    std::remove(temp.c_str());
    std::string message = "cannot write '" + path + "': " + what;
    if (err != 0) message += " (" + std::string(std::strerror(err)) + ")";
    throw std::runtime_error(message);
  };

  errno = 0;
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  if (!out) fail("cannot create the temporary file '" + temp + "'", errno);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.flush();
  if (!out) fail("writing the temporary file '" + temp + "' failed", errno);
  out.close();
  if (out.fail()) fail("closing the temporary file '" + temp + "' failed", errno);

  errno = 0;
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    fail("renaming '" + temp + "' to it failed", errno);
  }
}

std::string outputFolderProblem(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path place = fs::absolute(fs::path(folder), error);
  if (error) return "not a usable path (" + error.message() + ")";
  if (fs::exists(place, error) && !fs::is_directory(place, error)) return "exists and is not a folder";
  // The nearest existing ancestor is where the folders would be created.
  fs::path existing = place;
  while (!fs::exists(existing, error) && existing.has_parent_path() && existing.parent_path() != existing)
    existing = existing.parent_path();
  if (!fs::is_directory(existing, error)) return "lies under '" + existing.string() + "', which is not a folder";
  if (access(existing.c_str(), W_OK | X_OK) != 0)
    return "cannot be written: '" + existing.string() + "' is not writable (" + std::strerror(errno) + ")";
  return "";
}

}  // namespace pbdlab
