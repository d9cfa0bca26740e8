#pragma once
// The one error type for bad input: it names the file and the field (a JSON pointer such as
// "/material/nu", or "element 17" for a mesh) so the user can find what to fix.
#include <stdexcept>
#include <string>

namespace pbdlab {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string field, const std::string& what)
      : std::runtime_error(file + ": " + field + ": " + what),
        file_(std::move(file)),
        field_(std::move(field)) {}
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }

 private:
  std::string file_;
  std::string field_;
};

}  // namespace pbdlab
