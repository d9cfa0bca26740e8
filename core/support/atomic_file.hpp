#pragma once
// Output that is never half-written: write to PATH.tmp.<pid> in the same folder, then rename.
// A process killed at any moment (SIGKILL, OOM) leaves PATH either absent, as it was, or
// complete; a full disk or a file-size limit leaves it as it was and throws OutputError.
// What can be left behind is PATH.tmp.<pid> of the killed process: no reader takes it for
// PATH, and the next write of PATH removes it (docs/crash-safety.md). Durability across a
// power loss or kernel crash is not promised (there is no fsync).
#include <stdexcept>
#include <string>
#include <vector>

namespace pbdlab {

// A file that could not be written (full disk, file-size limit, no permission): the message
// names the file and says why (strerror). Not a bug of pbdlab: the command line reports it as
// an error, not as an internal one.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `contents` to `path` atomically. Throws OutputError naming the path; the temporary
// file is removed and `path` is left as it was. Before writing, the temporary files of `path`
// left by processes that no longer exist (PATH.tmp.<pid>, killed writers) are removed.
void writeFileAtomically(const std::string& path, const std::string& contents);

// The temporary name writeFileAtomically uses for `path` in process `pid`.
std::string atomicTemporaryName(const std::string& path, long pid);

// For a file name NAME.tmp.<pid> whose process no longer exists (a writer killed mid-write):
// NAME; otherwise "". Lets a folder's owner clear leftovers of files it no longer writes.
std::string deadWritersTarget(const std::string& file_name);

// Why outputs could not be written into `folder` (created later if missing), or "" if they
// can: it exists and is not a folder, it would lie under a file, or the nearest existing folder
// is not writable. Commands check their output place with it before any work, so a bad --out
// is reported at once, not after the whole run.
std::string outputFolderProblem(const std::string& folder);

// Makes `folder` ready for a command's outputs before any work, for what outputFolderProblem
// cannot see (a root user passes every permission check, and /proc or a read-only mount
// refuse only the real thing): creates it with its missing parents, then writes and removes a
// probe file in it. Returns why it cannot be used ("" when it can). `created` receives the
// folders it created, outermost first, for removeEmptyFolders when the command then fails.
std::string prepareOutputFolder(const std::string& folder, std::vector<std::string>& created);

// Removes each folder of `folders` that is empty, innermost (last) first; a folder that holds
// anything stays. Never throws.
void removeEmptyFolders(const std::vector<std::string>& folders) noexcept;

}  // namespace pbdlab
