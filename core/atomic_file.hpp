#pragma once
// Output that is never half-written: write to PATH.tmp.<pid> in the same folder, then rename.
#include <string>

namespace pbdlab {

// Writes `contents` to `path` atomically. Throws std::runtime_error naming the path.
void writeFileAtomically(const std::string& path, const std::string& contents);

}  // namespace pbdlab
