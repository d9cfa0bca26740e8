#pragma once
// Output that is never half-written: write to PATH.tmp.<pid> in the same folder, then rename.
#include <string>

namespace pbdlab {

// Writes `contents` to `path` atomically. Throws std::runtime_error naming the path.
void writeFileAtomically(const std::string& path, const std::string& contents);

// Why outputs could not be written into `folder` (created later if missing), or "" if they
// can: it exists and is not a folder, it would lie under a file, or the nearest existing folder
// is not writable. Commands check their output place with it before any work, so a bad --out
// is reported at once, not after the whole run.
std::string outputFolderProblem(const std::string& folder);

}  // namespace pbdlab
