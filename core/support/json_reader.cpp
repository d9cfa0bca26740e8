#include "core/support/json_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/support/input_error.hpp"
#include "core/support/input_file.hpp"

namespace pbdlab {

using nlohmann::json;

std::string jsonPointerChild(const std::string& at, const std::string& key) {
  std::string out = at + "/";
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string jsonPointerChild(const std::string& at, std::size_t index) { return at + "/" + std::to_string(index); }

std::string describeJson(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case json::value_t::string: return "the string " + value.dump();
    case json::value_t::array: return "an array of " + std::to_string(value.size());
    case json::value_t::object: return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return value.dump();
    case json::value_t::number_float: {
      const double d = value.get<double>();
      if (std::isnan(d)) return "NaN";
      if (std::isinf(d)) return d > 0 ? "infinity (a number too large for a double)" : "-infinity";
      return value.dump();
    }
    default: return "a value of another type";
  }
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearestName(const std::string& name, const std::vector<std::string>& known) {
  std::string nearest;
  std::size_t best = std::numeric_limits<std::size_t>::max();
  for (const std::string& k : known) {
    const std::size_t d = editDistance(name, k);
    if (d < best) best = d, nearest = k;
  }
  if (!nearest.empty() && best <= std::max<std::size_t>(2, nearest.size() / 4)) return nearest;
  return "";
}

// --- JsonReader -------------------------------------------------------------------------

void JsonReader::fail(const std::string& at, const std::string& message) const {
  throw InputError(source_, at.empty() ? "(root)" : at, message);
}

const json& JsonReader::object(const json& value, const std::string& at) const {
  if (!value.is_object()) fail(at, "must be a JSON object, got " + describeJson(value));
  return value;
}

const json& JsonReader::array(const json& value, const std::string& at) const {
  if (!value.is_array()) fail(at, "must be an array, got " + describeJson(value));
  return value;
}

void JsonReader::onlyKeys(const json& object, const std::string& at, const std::vector<std::string>& known,
                          const std::string& context) const {
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string message = "unknown key '" + key + "'";
    if (!context.empty()) message += " " + context;
    const std::string nearest = nearestName(key, known);
    if (!nearest.empty()) message += " (did you mean '" + nearest + "'?)";
    fail(jsonPointerChild(at, key), message + "; known keys here: " + joinNames(known));
  }
}

const json& JsonReader::required(const json& object, const std::string& key, const std::string& at) const {
  auto it = object.find(key);
  if (it == object.end()) fail(jsonPointerChild(at, key), "is required but missing");
  return *it;
}

double JsonReader::number(const json& value, const std::string& at) const {
  if (!value.is_number()) fail(at, "must be a number, got " + describeJson(value));
  const double d = value.get<double>();
  if (!std::isfinite(d)) fail(at, "must be a finite number, got " + describeJson(value));
  return d;
}

double JsonReader::positive(const json& value, const std::string& at) const {
  const double d = number(value, at);
  if (!(d > 0.0)) fail(at, "must be > 0, got " + value.dump());
  return d;
}

double JsonReader::nonNegative(const json& value, const std::string& at) const {
  const double d = number(value, at);
  if (!(d >= 0.0)) fail(at, "must be >= 0, got " + value.dump());
  return d;
}

int JsonReader::integer(const json& value, const std::string& at) const {
  if (!value.is_number_integer()) fail(at, "must be an integer, got " + describeJson(value));
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      fail(at, "is out of range (too large for an integer), got " + value.dump());
  } else {
    const std::int64_t i = value.get<std::int64_t>();
    if (i > std::numeric_limits<int>::max() || i < std::numeric_limits<int>::min())
      fail(at, "is out of range (too large for an integer), got " + value.dump());
  }
  return value.get<int>();
}

int JsonReader::integer(const json& value, const std::string& at, int min, int max) const {
  const int i = integer(value, at);
  if (i < min || i > max) {
    const std::string range = max == std::numeric_limits<int>::max()
                                  ? ">= " + std::to_string(min)
                                  : "in " + std::to_string(min) + " .. " + std::to_string(max);
    fail(at, "must be " + range + ", got " + std::to_string(i));
  }
  return i;
}

int JsonReader::integerAtLeast(const json& value, const std::string& at, int min) const {
  return integer(value, at, min, std::numeric_limits<int>::max());
}

std::string JsonReader::string(const json& value, const std::string& at) const {
  if (!value.is_string()) fail(at, "must be a string, got " + describeJson(value));
  return value.get<std::string>();
}

std::string JsonReader::nonEmptyString(const json& value, const std::string& at) const {
  std::string s = string(value, at);
  if (s.empty()) fail(at, "must be a non-empty string");
  return s;
}

bool JsonReader::boolean(const json& value, const std::string& at) const {
  if (!value.is_boolean()) fail(at, "must be true or false, got " + describeJson(value));
  return value.get<bool>();
}

std::vector<double> JsonReader::numbers(const json& value, const std::string& at, std::size_t n, bool positive) const {
  if (!value.is_array() || value.size() != n)
    fail(at, "must be an array of " + std::to_string(n) + " numbers, got " + describeJson(value));
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string item = jsonPointerChild(at, i);
    out.push_back(positive ? this->positive(value[i], item) : number(value[i], item));
  }
  return out;
}

Vec3 JsonReader::vec3(const json& value, const std::string& at) const {
  const std::vector<double> v = numbers(value, at, 3);
  return Vec3(v[0], v[1], v[2]);
}

void JsonReader::failUnknownName(const std::string& at, const std::string& name, const std::vector<std::string>& names,
                                 const std::string& what) const {
  std::string message = "unknown " + what + " '" + name + "'";
  const std::string nearest = nearestName(name, names);
  if (!nearest.empty()) message += " (did you mean '" + nearest + "'?)";
  fail(at, message + " (known: " + joinNames(names) + ")");
}

std::string JsonReader::oneOf(const json& value, const std::string& at, const std::vector<std::string>& names,
                              const std::string& what) const {
  if (!value.is_string())
    fail(at, "must be a string (one of: " + joinNames(names) + "), got " + describeJson(value));
  const std::string name = value.get<std::string>();
  if (std::find(names.begin(), names.end(), name) == names.end()) failUnknownName(at, name, names, what);
  return name;
}

// --- files ------------------------------------------------------------------------------

namespace {

// Follows the parse to know the JSON pointer of the value being read: nlohmann keeps the last
// of two equal keys silently (rejected here, naming the duplicate), and reports a number too
// large for a double (1e999) without saying where (currentPointer() says it).
class ParseTracker {
 public:
  explicit ParseTracker(std::string source) : source_(std::move(source)) {}

  bool onEvent(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: frames_.push_back(frame(false)); break;
      case json::parse_event_t::array_start: frames_.push_back(frame(true)); break;
      case json::parse_event_t::key: {
        Frame& top = frames_.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second)
          throw InputError(source_, currentPointer(), "duplicate key '" + top.key + "' (JSON keeps only one of them)");
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        elementDone();
        break;
      case json::parse_event_t::value: elementDone(); break;
    }
    return true;
  }

  // The pointer of the value being parsed now (of the last key read, or the next array slot).
  std::string currentPointer() const {
    std::string out;
    for (const Frame& f : frames_) out = f.is_array ? jsonPointerChild(out, f.index) : jsonPointerChild(out, f.key);
    return out.empty() ? "(root)" : out;
  }

 private:
  struct Frame {
    bool is_array = false;
    std::size_t index = 0;
    std::string key;
    std::set<std::string> keys;
  };

  static Frame frame(bool is_array) {
    Frame f;
    f.is_array = is_array;
    return f;
  }

  void elementDone() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
  }

  std::string source_;
  std::vector<Frame> frames_;
};

}  // namespace

json parseJsonText(const std::string& text, const std::string& source) {
  ParseTracker tracker(source);
  try {
    return json::parse(text,
                       [&tracker](int, json::parse_event_t event, json& parsed) { return tracker.onEvent(event, parsed); });
  } catch (const json::parse_error& error) {
    throw InputError(source, "(file)", std::string("not valid JSON: ") + error.what());
  } catch (const json::out_of_range& error) {
    // 406: a number beyond the range of a double, such as 1e999 (it would be infinite).
    throw InputError(source, tracker.currentPointer(), std::string("must be a finite number (") + error.what() + ")");
  }
}

json readJsonFile(const std::string& path) { return parseJsonText(readInputFile(path), path); }

}  // namespace pbdlab
