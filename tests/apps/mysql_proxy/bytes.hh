#pragma once
// Test helpers: bytes from hex and text, and framed packets.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "apps/mysql-proxy/packet.hh"

namespace affine_mysql_test {

inline std::vector<std::byte> from_hex(std::string_view hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::vector<std::byte> out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(std::byte(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  return out;
}

inline std::vector<std::byte> from_text(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), reinterpret_cast<const std::byte*>(s.data() + s.size())};
}

// `payload` framed as one packet starting at `seq`.
inline std::vector<std::byte> framed(std::uint8_t seq, std::span<const std::byte> payload) {
  std::vector<std::byte> out;
  affine_mysql::append_packet(out, seq, payload);
  return out;
}

}  // namespace affine_mysql_test
