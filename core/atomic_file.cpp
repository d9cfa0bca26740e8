#include "core/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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

}  // namespace pbdlab
