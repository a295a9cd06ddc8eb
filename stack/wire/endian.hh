#pragma once
// Network byte order fields. Headers are read and written through memcpy
// into integers, never by casting a byte pointer to a struct: packet bytes
// have no alignment and no object lifetime, so a cast would be undefined
// behaviour (and GCC's strict aliasing would act on it).
//
// A protocol names each of its fields once as a `be16_field` or `be32_field`
// at its byte offset; the field's width comes with its type, so a 16-bit
// field cannot be read as 32 bits. Views check the buffer length once in
// parse(), after which field reads need no further checks.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace affine::stack {

template <class T>
constexpr T from_big_endian(T v) noexcept {
  if constexpr (std::endian::native == std::endian::little) return std::byteswap(v);
  return v;
}

inline std::uint16_t load_be16(const std::byte* p) noexcept {
  std::uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return from_big_endian(v);
}

inline std::uint32_t load_be32(const std::byte* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return from_big_endian(v);
}

inline void store_be16(std::byte* p, std::uint16_t v) noexcept {
  v = from_big_endian(v);  // byte swapping is its own inverse
  std::memcpy(p, &v, sizeof v);
}

inline void store_be32(std::byte* p, std::uint32_t v) noexcept {
  v = from_big_endian(v);
  std::memcpy(p, &v, sizeof v);
}

template <class T>
struct be_field {
  static_assert(std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::uint32_t>);
  std::size_t offset;

  // Precondition: bytes.size() >= offset + sizeof(T); views guarantee it
  // by parsing, emitters by checking the room they need.
  T get(std::span<const std::byte> bytes) const noexcept {
    if constexpr (sizeof(T) == 2) return load_be16(bytes.data() + offset);
    else return load_be32(bytes.data() + offset);
  }
  void set(std::span<std::byte> bytes, T v) const noexcept {
    if constexpr (sizeof(T) == 2) store_be16(bytes.data() + offset, v);
    else store_be32(bytes.data() + offset, v);
  }
};

using be16_field = be_field<std::uint16_t>;
using be32_field = be_field<std::uint32_t>;

// A one-byte field, for symmetry with the others in a protocol's field list.
struct u8_field {
  std::size_t offset;
  std::uint8_t get(std::span<const std::byte> bytes) const noexcept { return std::uint8_t(bytes[offset]); }
  void set(std::span<std::byte> bytes, std::uint8_t v) const noexcept { bytes[offset] = std::byte(v); }
};

// A field of N bytes kept as they are, in order (a MAC address, an IPv6
// address), read and written like the ones above.
template <std::size_t N>
struct bytes_field {
  std::size_t offset;
  std::array<std::uint8_t, N> get(std::span<const std::byte> bytes) const noexcept {
    std::array<std::uint8_t, N> v;
    std::memcpy(v.data(), bytes.data() + offset, N);
    return v;
  }
  void set(std::span<std::byte> bytes, const std::array<std::uint8_t, N>& v) const noexcept {
    std::memcpy(bytes.data() + offset, v.data(), N);
  }
};

}  // namespace affine::stack
