#pragma once
// The TCP tests' stream: offset i holds 'a' + i % 26, so a byte read says
// where in the stream it belongs (harness.hh, wire_pair.hh, tests/fuzz).

#include <cstddef>
#include <string>

namespace affine::stack::tcp::testing {

inline std::string pattern(std::size_t offset, std::size_t len) {
  std::string out(len, '\0');
  for (std::size_t i = 0; i < len; ++i) out[i] = char('a' + (offset + i) % 26);
  return out;
}

}  // namespace affine::stack::tcp::testing
