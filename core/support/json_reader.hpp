#pragma once
// The one reader of JSON input files (scenes, mesh recipes, validation cases, solver options,
// paper tables). Every error is an InputError(source, JSON pointer, message), printed as
// `FILE: /json/pointer: message` (RFC 6901 pointers: "~" is written "~0", "/" is "~1").
//
//   const nlohmann::json doc = readJsonFile(path);   // file, syntax, duplicate keys, 1e999
//   const JsonReader in(path);
//   in.object(doc, "");                                // or in.fail("(root)", ...)
//   in.onlyKeys(doc, "", {"name", "time"});            // unknown keys, with "did you mean"
//   const double dt = in.positive(in.required(doc["time"], "dt", "/time"), "/time/dt");
//
// Conventions: `at` is the pointer of the value being read ("" is the document itself);
// numbers are finite (NaN, infinity and strings such as "NaN" are rejected), integers are
// written as integers and fit an int.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/support/types.hpp"

namespace pbdlab {

// JSON pointer of a child: at + "/" + the escaped key (RFC 6901), or at + "/" + index.
std::string jsonPointerChild(const std::string& at, const std::string& key);
std::string jsonPointerChild(const std::string& at, std::size_t index);

// What a value is, for "must be X, got Y" messages: null, true, the string "x", an array of
// 2, an object, 1.5, NaN, infinity (a number too large for a double).
std::string describeJson(const nlohmann::json& value);

// "a, b, c".
std::string joinNames(const std::vector<std::string>& names);
// Levenshtein distance (the "did you mean" of unknown keys and names).
std::size_t editDistance(const std::string& a, const std::string& b);
// The name of `known` nearest to `name`, if it is close enough to be a typo of it; else "".
std::string nearestName(const std::string& name, const std::vector<std::string>& known);

class JsonReader {
 public:
  // `source` names the file (or "<inline>") in every error.
  explicit JsonReader(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  [[noreturn]] void fail(const std::string& at, const std::string& message) const;

  // Shape.
  const nlohmann::json& object(const nlohmann::json& value, const std::string& at) const;
  const nlohmann::json& array(const nlohmann::json& value, const std::string& at) const;
  // Rejects every key of `object` outside `known` at its own pointer, suggesting the nearest
  // known key and listing them all. `context` (e.g. `for a mesh of type "box"`) follows the
  // key in the message.
  void onlyKeys(const nlohmann::json& object, const std::string& at, const std::vector<std::string>& known,
                const std::string& context = "") const;
  // object[key], or an error at at/key ("is required but missing").
  const nlohmann::json& required(const nlohmann::json& object, const std::string& key, const std::string& at) const;

  // Numbers: finite; the range helpers add ", got V" to their message.
  double number(const nlohmann::json& value, const std::string& at) const;
  double positive(const nlohmann::json& value, const std::string& at) const;     // > 0
  double nonNegative(const nlohmann::json& value, const std::string& at) const;  // >= 0
  // Integers that fit an int (8, not 8.0); the second form also checks min <= i <= max.
  int integer(const nlohmann::json& value, const std::string& at) const;
  int integer(const nlohmann::json& value, const std::string& at, int min, int max) const;
  int integerAtLeast(const nlohmann::json& value, const std::string& at, int min) const;

  std::string string(const nlohmann::json& value, const std::string& at) const;
  std::string nonEmptyString(const nlohmann::json& value, const std::string& at) const;
  bool boolean(const nlohmann::json& value, const std::string& at) const;
  // An array of exactly n finite numbers (each > 0 when `positive`), errors per element.
  std::vector<double> numbers(const nlohmann::json& value, const std::string& at, std::size_t n,
                              bool positive = false) const;
  Vec3 vec3(const nlohmann::json& value, const std::string& at) const;

  // A string that must be one of `names`: "unknown WHAT 'x' (did you mean 'y'?) (known: a, b)".
  std::string oneOf(const nlohmann::json& value, const std::string& at, const std::vector<std::string>& names,
                    const std::string& what = "value") const;
  // The same, mapped to an enum: {{"auto", E::kAuto}, {"true", E::kTrue}}.
  template <typename Enum>
  Enum enumOf(const nlohmann::json& value, const std::string& at,
              const std::vector<std::pair<std::string, Enum>>& names, const std::string& what = "value") const {
    std::vector<std::string> keys;
    for (const auto& entry : names) keys.push_back(entry.first);
    const std::string name = oneOf(value, at, keys, what);
    for (const auto& entry : names)
      if (entry.first == name) return entry.second;
    fail(at, "internal error: no value for '" + name + "'");
  }
  // "unknown WHAT 'name' (did you mean ...?) (known: ...)" at `at`, for names checked elsewhere.
  [[noreturn]] void failUnknownName(const std::string& at, const std::string& name,
                                    const std::vector<std::string>& names, const std::string& what) const;

 private:
  std::string source_;
};

// Reads and parses a JSON file strictly. Errors (InputError naming `path`):
//   (file): cannot open (reason) / is a directory / cannot read / not valid JSON: ... line, column
//   /the/pointer: duplicate key 'k' (JSON keeps only one of them)
//   /the/pointer: must be a finite number (... number overflow parsing '1e999')
nlohmann::json readJsonFile(const std::string& path);
// The same checks for text that is not in a file (`source` names it, e.g. "<inline>").
nlohmann::json parseJsonText(const std::string& text, const std::string& source);

}  // namespace pbdlab
