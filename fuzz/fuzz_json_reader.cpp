// The shared JSON reader (core/support/json_reader.hpp): strict parsing of scene, recipe, case and
// table files (duplicate keys, numbers out of range, invalid UTF-8, deep nesting).
#include "core/support/json_reader.hpp"
#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = pbdlab::fuzz::bytes(data, size);
  pbdlab::fuzz::expectInputErrorOnly("fuzz_json_reader", [&] {
    const nlohmann::json value = pbdlab::parseJsonText(text, "<fuzz>.json");
    // The typed accessors on whatever came out.
    const pbdlab::JsonReader in("<fuzz>.json");
    if (value.is_object()) {
      for (const auto& [key, item] : value.items()) {
        const std::string at = pbdlab::jsonPointerChild("", key);
        try {
          if (item.is_number()) in.integer(item, at, -5, 5);
          if (item.is_array()) in.vec3(item, at);
          if (item.is_string()) in.oneOf(item, at, {"alpha", "beta", "gamma"}, "name");
        } catch (const pbdlab::InputError&) {
        }
      }
    }
  });
  return 0;
}
