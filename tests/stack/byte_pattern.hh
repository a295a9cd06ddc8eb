#pragma once
// Deterministic test bytes: position i of stream `seed`, checked byte for
// byte on the far side (stronger than comparing digests: a failure says
// where the streams part).

#include <cstddef>
#include <cstdint>
#include <span>

namespace affine::stack::testing {

struct byte_pattern {
  std::uint64_t seed;
  std::byte at(std::uint64_t i) const {
    std::uint64_t x = (i / 8 + 1) * 0x9e3779b97f4a7c15ull ^ seed;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return std::byte(x >> (8 * (i % 8)));
  }
  void fill(std::uint64_t from, std::span<std::byte> out) const {
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = at(from + k);
  }
  bool check(std::uint64_t from, std::span<const std::byte> in) const {
    for (std::size_t k = 0; k < in.size(); ++k)
      if (in[k] != at(from + k)) return false;
    return true;
  }
};

}  // namespace affine::stack::testing
