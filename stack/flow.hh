#pragma once
// A TCP or UDP flow as the local side sees it: host byte order, local first.

#include <compare>
#include <cstddef>
#include <cstdint>

namespace affine::stack {

struct flow_tuple {
  std::uint32_t local_addr = 0;
  std::uint32_t remote_addr = 0;
  std::uint16_t local_port = 0;
  std::uint16_t remote_port = 0;
  friend constexpr auto operator<=>(const flow_tuple&, const flow_tuple&) = default;
};

struct flow_tuple_hash {
  std::size_t operator()(const flow_tuple& t) const noexcept {
    std::uint64_t x = (std::uint64_t(t.local_addr) << 32 | t.remote_addr) ^
                      (std::uint64_t(t.local_port) << 16 | t.remote_port) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return std::size_t(x ^ (x >> 32));
  }
};

}  // namespace affine::stack
