#pragma once
// Loading affine's schema from text, for the config tests.

#include <expected>
#include <string>
#include <string_view>

#include "affine/config.hh"

namespace affine::config::test {

inline std::expected<settings, std::string> load(std::string_view toml) {
  return load_string(config_schema(), toml, "affine.toml");
}

// The one-line error of a file that must not load.
inline std::string load_error(std::string_view toml) {
  auto loaded = load(toml);
  return loaded ? std::string("(it loaded)") : loaded.error();
}

// The one-line error of overrides, applied to the defaults, that must fail.
inline std::string set_error(std::initializer_list<std::string> assignments) {
  settings s = defaults(config_schema());
  const std::vector<std::string> list(assignments);
  auto applied = apply_sets(s, list);
  return applied ? std::string("(it applied)") : applied.error();
}

}  // namespace affine::config::test
