#pragma once
// A cursor over a text (or partly binary) input file held in memory, shared by the readers
// that parse files themselves (.msh in meshes/msh_io.cpp, ASCII STL in meshes/gmsh_meshes.cpp).
// Every error is an InputError naming the file and the line (or byte) where reading stopped.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <string>
#include <utility>

#include "core/support/input_error.hpp"

namespace pbdlab {

// Reads tokens (ASCII) or raw values (binary sections of MSH 4.1) from the file's bytes; every
// error is an InputError naming the file and the line (or byte) where reading stopped.
class TextCursor {
 public:
  TextCursor(std::string path, const std::string& text) : path_(std::move(path)), text_(text) {}

  bool binary = false;  // inside a binary section

  std::string where() const {
    if (binary) return "byte " + std::to_string(pos_);
    const std::size_t end = std::min(pos_, text_.size());
    return "line " + std::to_string(1 + std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
  }
  [[noreturn]] void fail(const std::string& message) const { throw InputError(path_, where(), message); }

  // Bytes not read yet.
  std::size_t remaining() const { return pos_ < text_.size() ? text_.size() - pos_ : 0; }
  // How many of `count` items of at least `min_bytes` bytes each the rest of the file can
  // hold: what may be reserved for a count read from the file (a corrupt count must not
  // allocate gigabytes; reading then stops at the end of the file with its own message).
  std::size_t fitting(std::uint64_t count, std::size_t min_bytes) const {
    return static_cast<std::size_t>(std::min<std::uint64_t>(count, remaining() / min_bytes));
  }

  bool atEnd() {
    skipSpace();
    return pos_ >= text_.size();
  }

  std::string token(const std::string& what) {
    skipSpace();
    if (pos_ >= text_.size()) fail("unexpected end of file (expected " + what + "): the file is truncated");
    const std::size_t start = pos_;
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  void expect(const std::string& marker) {
    const std::string got = token(marker);
    if (got != marker) fail("expected " + marker + ", got '" + shorten(got) + "'");
  }

  long long integer(const std::string& what) {
    if (binary) {
      std::int32_t v;
      raw(&v, sizeof v, what);
      return v;
    }
    const std::string t = token(what);
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (end != t.c_str() + t.size() || errno != 0) fail("expected " + what + " (an integer), got '" + shorten(t) + "'");
    return v;
  }

  // A non-negative count or tag (size_t in binary sections).
  std::uint64_t count(const std::string& what) {
    if (binary) {
      std::uint64_t v;
      raw(&v, sizeof v, what);
      return v;
    }
    const long long v = integer(what);
    if (v < 0) fail("expected " + what + " (>= 0), got " + std::to_string(v));
    return static_cast<std::uint64_t>(v);
  }

  // A number as written (NaN and infinity pass: the caller words their error).
  double number(const std::string& what) {
    double v;
    if (binary) {
      raw(&v, sizeof v, what);
    } else {
      const std::string t = token(what);
      char* end = nullptr;
      v = std::strtod(t.c_str(), &end);
      if (t.empty() || end != t.c_str() + t.size()) fail("expected " + what + " (a number), got '" + shorten(t) + "'");
    }
    return v;
  }
  // A finite number.
  double real(const std::string& what) {
    const double v = number(what);
    if (!std::isfinite(v)) fail(what + " is not finite");
    return v;
  }

  // A double-quoted name (may contain spaces), as in $PhysicalNames.
  std::string quoted(const std::string& what) {
    skipSpace();
    if (pos_ >= text_.size()) fail("unexpected end of file (expected " + what + "): the file is truncated");
    if (text_[pos_] != '"') fail("expected " + what + " in double quotes");
    const std::size_t close = text_.find('"', pos_ + 1);
    if (close == std::string::npos) fail("unterminated " + what);
    std::string name = text_.substr(pos_ + 1, close - pos_ - 1);
    pos_ = close + 1;
    return name;
  }

  // Skips the rest of the line (up to, not past, its newline).
  void skipLine() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  }

  // Skips to just after the next newline (the end of a binary section's data).
  void skipNewline() {
    if (pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
  }

  // Skips an unknown section: everything up to and including "$End<name>".
  void skipSection(const std::string& name) {
    const std::string end = "$End" + name;
    const std::size_t at = text_.find(end, pos_);
    if (at == std::string::npos) fail("section $" + name + " has no " + end + ": the file is truncated");
    pos_ = at + end.size();
  }

 private:
  static std::string shorten(const std::string& s) { return s.size() > 40 ? s.substr(0, 40) + "..." : s; }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  void raw(void* out, std::size_t n, const std::string& what) {
    if (pos_ + n > text_.size()) fail("unexpected end of file (expected " + what + "): the file is truncated");
    std::memcpy(out, text_.data() + pos_, n);
    pos_ += n;
  }

  std::string path_;
  const std::string& text_;
  std::size_t pos_ = 0;
};

}  // namespace pbdlab
