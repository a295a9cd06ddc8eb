#pragma once
// A string as a JSON string literal, for the apps' one-line results: error
// messages may hold quotes, backslashes or control characters.

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace affine_apps {

inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", unsigned(c));
    } else {
      out += c;
    }
  }
  return out + '"';
}

}  // namespace affine_apps
