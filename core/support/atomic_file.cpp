#include "core/support/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace pbdlab {

namespace {

// True when no process `pid` exists (kill(pid, 0) fails with ESRCH). A live process, or one
// we may not signal (EPERM), keeps its temporary file: it may still be writing it.
bool processIsGone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// Removes PATH.tmp.<pid> of every writer of `path` that no longer exists. Best effort: a
// leftover that cannot be removed costs disk space, not correctness.
void removeDeadWritersTemporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string name = target.filename().string();
  std::error_code ec;
  fs::directory_iterator it(folder, ec);
  if (ec) return;
  for (const fs::directory_entry& entry : it)
    if (deadWritersTarget(entry.path().filename().string()) == name) fs::remove(entry.path(), ec);
}

}  // namespace

std::string deadWritersTarget(const std::string& file_name) {
  const std::size_t at = file_name.rfind(".tmp.");
  if (at == std::string::npos || at == 0) return "";
  const std::string digits = file_name.substr(at + 5);
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return "";
  const long pid = std::stol(digits);
  if (pid == static_cast<long>(::getpid()) || !processIsGone(pid)) return "";
  return file_name.substr(0, at);
}

std::string atomicTemporaryName(const std::string& path, long pid) { return path + ".tmp." + std::to_string(pid); }

void writeFileAtomically(const std::string& path, const std::string& contents) {
  if (path.empty()) throw OutputError("writeFileAtomically: empty output path");
  removeDeadWritersTemporaries(path);
  // Same folder as the target, so the rename stays on one file system and is atomic.
  const std::string temp = atomicTemporaryName(path, static_cast<long>(::getpid()));
  int fd = -1;
  auto fail = [&](const std::string& what, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    std::string message = "cannot write '" + path + "': " + what;
    if (err != 0) message += " (" + std::string(std::strerror(err)) + ")";
    throw OutputError(message);
  };

  // A file of an earlier process with our pid is not ours to append to; O_EXCL also refuses a
  // symlink planted at the temporary name.
  ::unlink(temp.c_str());
  fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    fail("cannot create the temporary file '" + temp + "'", err);
  }
  const char* data = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      // ENOSPC (full disk), EFBIG (file-size limit; SIGXFSZ must be ignored to see it), EIO, ...
      fail("writing the temporary file '" + temp + "' failed", err);
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  // Some file systems (NFS, quotas) report a full disk only when the file is closed.
  const int closed = ::close(fd);
  const int close_error = errno;
  fd = -1;
  if (closed != 0 && close_error != EINTR) fail("closing the temporary file '" + temp + "' failed", close_error);

  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    fail("renaming '" + temp + "' to it failed", err);
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

std::string prepareOutputFolder(const std::string& folder, std::vector<std::string>& created) {
  namespace fs = std::filesystem;
  if (std::string problem = outputFolderProblem(folder); !problem.empty()) return problem;
  std::error_code error;
  const fs::path place = fs::absolute(fs::path(folder), error).lexically_normal();
  if (error) return "not a usable path (" + error.message() + ")";
  // The folders to create, outermost first (create_directories does not say which it made).
  std::vector<fs::path> missing;
  for (fs::path p = place; !p.empty() && !fs::exists(p, error); p = p.parent_path()) {
    missing.insert(missing.begin(), p);
    if (p == p.parent_path()) break;
  }
  for (const fs::path& p : missing) {
    if (p.filename().empty()) continue;  // a trailing separator: the same folder as its parent
    if (!fs::create_directory(p, error) && error) {
      const std::string why = error.message();
      removeEmptyFolders(created);
      created.clear();
      return "cannot be created: '" + p.string() + "' (" + why + ")";
    }
    created.push_back(p.string());
  }
  // Permissions are not the whole story (root, read-only mounts, /proc): write a file.
  const std::string probe = (place / (".pbdlab-write-probe." + std::to_string(static_cast<long>(::getpid())))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    removeEmptyFolders(created);
    created.clear();
    return "cannot be written: creating a file in '" + place.string() + "' failed (" + std::strerror(err) + ")";
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

void removeEmptyFolders(const std::vector<std::string>& folders) noexcept {
  namespace fs = std::filesystem;
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) {
    std::error_code error;
    if (fs::is_directory(*it, error) && fs::is_empty(*it, error) && !error) fs::remove(*it, error);
  }
}

}  // namespace pbdlab
