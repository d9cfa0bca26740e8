// The shared JSON reader: typed fields with JSON-pointer errors, and strict file parsing
// (duplicate keys, numbers too large for a double) that says where the fault is.
#include "core/support/json_reader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "core/support/input_error.hpp"

namespace pbdlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Runs `read`, expects an InputError with `source` and `field`, returns its message.
template <typename Read>
std::string errorOf(Read read, const std::string& source, const std::string& field) {
  try {
    read();
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), source) << error.what();
    EXPECT_EQ(error.field(), field) << error.what();
    // The command line prints `FILE: /json/pointer: message`.
    EXPECT_EQ(std::string(error.what()).rfind(source + ": " + field + ": ", 0), 0u) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no InputError at " << field;
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string writeFile(const std::string& name, const std::string& text) {
  const fs::path folder = fs::path(::testing::TempDir()) / ("pbdlab_json_reader_" + std::to_string(::getpid()));
  fs::create_directories(folder);
  const std::string path = (folder / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const JsonReader in("f.json");

TEST(JsonPointer, EscapesTildeAndSlash) {
  EXPECT_EQ(jsonPointerChild("", "a"), "/a");
  EXPECT_EQ(jsonPointerChild("/a", "b/c~d"), "/a/b~1c~0d");
  EXPECT_EQ(jsonPointerChild("/a", std::size_t{3}), "/a/3");
}

TEST(JsonReader, UnknownKeySuggestsTheNearest) {
  const json object = json::parse(R"({"youngs_modulos": 1, "model": "x"})");
  const std::string message =
      errorOf([&] { in.onlyKeys(object, "/material", {"model", "youngs_modulus", "poisson_ratio"}); }, "f.json",
              "/material/youngs_modulos");
  EXPECT_TRUE(contains(message, "unknown key 'youngs_modulos'")) << message;
  EXPECT_TRUE(contains(message, "did you mean 'youngs_modulus'?")) << message;
  EXPECT_TRUE(contains(message, "known keys here: model, youngs_modulus, poisson_ratio")) << message;
  // Nothing near: no suggestion, still the list.
  const std::string far = errorOf([&] { in.onlyKeys(json{{"zzzzzzzz", 1}}, "", {"model"}); }, "f.json", "/zzzzzzzz");
  EXPECT_FALSE(contains(far, "did you mean")) << far;
  // A context follows the key.
  const std::string with_context =
      errorOf([&] { in.onlyKeys(json{{"cell", 1}}, "/mesh", {"cells"}, "for a mesh of type \"box\""); }, "f.json",
              "/mesh/cell");
  EXPECT_TRUE(contains(with_context, "unknown key 'cell' for a mesh of type \"box\" (did you mean 'cells'?)"))
      << with_context;
  EXPECT_NO_THROW(in.onlyKeys(object, "/material", {"model", "youngs_modulos"}));
}

TEST(JsonReader, UnknownKeyPointerIsEscaped) {
  const json object = json::parse(R"({"a/b~c": 1})");
  errorOf([&] { in.onlyKeys(object, "/x~1y", {"ab"}); }, "f.json", "/x~1y/a~1b~0c");
}

TEST(JsonReader, MissingRequiredKey) {
  const json object = json::parse(R"({"dt": 1})");
  const std::string message = errorOf([&] { in.required(object, "steps", "/time"); }, "f.json", "/time/steps");
  EXPECT_TRUE(contains(message, "is required but missing")) << message;
  EXPECT_EQ(in.required(object, "dt", "/time"), 1);
}

TEST(JsonReader, WrongTypes) {
  EXPECT_TRUE(contains(errorOf([&] { in.number(json("1e5"), "/e"); }, "f.json", "/e"),
                       "must be a number, got the string \"1e5\""));
  EXPECT_TRUE(contains(errorOf([&] { in.string(json(3), "/s"); }, "f.json", "/s"), "must be a string, got 3"));
  EXPECT_TRUE(contains(errorOf([&] { in.boolean(json("yes"), "/b"); }, "f.json", "/b"), "must be true or false"));
  EXPECT_TRUE(contains(errorOf([&] { in.object(json::array({1, 2}), "/o"); }, "f.json", "/o"),
                       "must be a JSON object, got an array of 2"));
  EXPECT_TRUE(contains(errorOf([&] { in.integer(json(8.0), "/i"); }, "f.json", "/i"), "must be an integer, got 8.0"));
  errorOf([&] { in.array(json::object(), "/a"); }, "f.json", "/a");
  // The document itself is "(root)".
  errorOf([&] { in.object(json(1), ""); }, "f.json", "(root)");
  EXPECT_EQ(in.string(json("x"), "/s"), "x");
  EXPECT_TRUE(in.boolean(json(true), "/b"));
}

TEST(JsonReader, NumbersMustBeFinite) {
  // A document built in memory can hold NaN and infinity; a string "NaN" is not a number.
  const std::string nan = errorOf([&] { in.number(json(std::numeric_limits<double>::quiet_NaN()), "/x"); }, "f.json", "/x");
  EXPECT_TRUE(contains(nan, "must be a finite number, got NaN")) << nan;
  errorOf([&] { in.number(json(std::numeric_limits<double>::infinity()), "/x"); }, "f.json", "/x");
  errorOf([&] { in.number(json("NaN"), "/x"); }, "f.json", "/x");
  EXPECT_DOUBLE_EQ(in.number(json(2.5), "/x"), 2.5);
  EXPECT_DOUBLE_EQ(in.number(json(3), "/x"), 3.0);
}

TEST(JsonReader, RangesSayWhatWasGiven) {
  EXPECT_TRUE(contains(errorOf([&] { in.positive(json(0), "/p"); }, "f.json", "/p"), "must be > 0, got 0"));
  EXPECT_TRUE(contains(errorOf([&] { in.nonNegative(json(-1.5), "/p"); }, "f.json", "/p"), "must be >= 0, got -1.5"));
  EXPECT_TRUE(contains(errorOf([&] { in.integerAtLeast(json(0), "/n", 1); }, "f.json", "/n"), "must be >= 1, got 0"));
  EXPECT_TRUE(contains(errorOf([&] { in.integerAtLeast(json(-2), "/n", 1); }, "f.json", "/n"), "must be >= 1, got -2"));
  EXPECT_TRUE(contains(errorOf([&] { in.integer(json(9), "/n", 0, 6); }, "f.json", "/n"), "must be in 0 .. 6, got 9"));
  EXPECT_EQ(in.integer(json(6), "/n", 0, 6), 6);
}

TEST(JsonReader, IntegerOverflow) {
  errorOf([&] { in.integer(json::parse("99999999999"), "/n"); }, "f.json", "/n");
  errorOf([&] { in.integer(json::parse("-99999999999"), "/n"); }, "f.json", "/n");
  const std::string message = errorOf([&] { in.integer(json::parse("18446744073709551615"), "/n"); }, "f.json", "/n");
  EXPECT_TRUE(contains(message, "out of range")) << message;
  EXPECT_EQ(in.integer(json::parse("2147483647"), "/n"), 2147483647);
  EXPECT_EQ(in.integer(json::parse("-2147483648"), "/n"), -2147483648LL);
}

TEST(JsonReader, ArraysOfNumbersNameTheElement) {
  errorOf([&] { in.vec3(json::parse("[1, 2]"), "/g"); }, "f.json", "/g");
  errorOf([&] { in.vec3(json::parse(R"([1, "down", 2])"), "/g"); }, "f.json", "/g/1");
  errorOf([&] { in.numbers(json::parse("[1, 0]"), "/size", 2, true); }, "f.json", "/size/1");
  EXPECT_EQ(in.vec3(json::parse("[1, 2, 3]"), "/g"), Vec3(1, 2, 3));
}

TEST(JsonReader, NamesFromAList) {
  enum class H { kAuto, kTrue };
  const std::vector<std::pair<std::string, H>> names = {{"auto", H::kAuto}, {"true", H::kTrue}};
  EXPECT_EQ(in.enumOf(json("true"), "/h", names), H::kTrue);
  const std::string message = errorOf([&] { in.enumOf(json("atuo"), "/h", names, "Hessian"); }, "f.json", "/h");
  EXPECT_TRUE(contains(message, "unknown Hessian 'atuo' (did you mean 'auto'?) (known: auto, true)")) << message;
  const std::string wrong_type = errorOf([&] { in.oneOf(json(true), "/h", {"auto", "true"}); }, "f.json", "/h");
  EXPECT_TRUE(contains(wrong_type, "one of: auto, true")) << wrong_type;
}

TEST(JsonFile, DuplicateKeyIsNamedWithItsPointer) {
  const std::string path = writeFile("duplicate.json", R"({"a": {"b": [1, {"c": 1, "c": 2}]}})");
  const std::string message = errorOf([&] { readJsonFile(path); }, path, "/a/b/1/c");
  EXPECT_TRUE(contains(message, "duplicate key 'c'")) << message;
  errorOf([&] { parseJsonText(R"({"x": 1, "x": 1})", "<inline>"); }, "<inline>", "/x");
  // Equal keys in different objects are fine.
  EXPECT_NO_THROW(parseJsonText(R"({"a": {"x": 1}, "b": {"x": 1}})", "<inline>"));
}

TEST(JsonFile, NumberTooLargeForADoubleIsNamed) {
  const std::string path = writeFile("huge.json", R"({"gravity": [0, 0, -1e999]})");
  const std::string message = errorOf([&] { readJsonFile(path); }, path, "/gravity/2");
  EXPECT_TRUE(contains(message, "must be a finite number")) << message;
  errorOf([&] { parseJsonText(R"({"a": {"b": 1e999}})", "<inline>"); }, "<inline>", "/a/b");
  errorOf([&] { parseJsonText("1e999", "<inline>"); }, "<inline>", "(root)");
}

TEST(JsonFile, NestedPointersAreEscaped) {
  errorOf([&] { parseJsonText(R"({"a/b": {"~k": 1, "~k": 2}})", "<inline>"); }, "<inline>", "/a~1b/~0k");
  errorOf([&] { parseJsonText(R"({"p~1": [1e999]})", "<inline>"); }, "<inline>", "/p~01/0");
}

TEST(JsonFile, FileErrors) {
  const std::string missing = (fs::path(::testing::TempDir()) / "pbdlab_no_such_file.json").string();
  EXPECT_TRUE(contains(errorOf([&] { readJsonFile(missing); }, missing, "(file)"), "cannot open"));
  const std::string folder = fs::path(writeFile("x.json", "{}")).parent_path().string();
  EXPECT_TRUE(contains(errorOf([&] { readJsonFile(folder); }, folder, "(file)"), "is a directory"));
  const std::string bad = writeFile("bad.json", "{\n  \"a\": 1,\n}\n");
  const std::string message = errorOf([&] { readJsonFile(bad); }, bad, "(file)");
  EXPECT_TRUE(contains(message, "not valid JSON")) << message;
  EXPECT_TRUE(contains(message, "line 3")) << message;
  errorOf([&] { readJsonFile(writeFile("empty.json", "")); }, writeFile("empty.json", ""), "(file)");
  EXPECT_EQ(readJsonFile(writeFile("ok.json", R"({"a": [1, 2]})")), json::parse(R"({"a": [1, 2]})"));
}

}  // namespace
}  // namespace pbdlab
