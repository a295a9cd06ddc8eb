#include "apps/rr/protocol.hh"

#include <cstring>

#include <fmt/format.h>

namespace affine_rr {

namespace {

constexpr std::array<char, 4> magic{'a', 'f', 'r', 'r'};
constexpr std::uint8_t version = 1;

void put_be(std::byte* at, std::uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) at[i] = std::byte(v >> (8 * (bytes - 1 - i)));
}

std::uint64_t get_be(const std::byte* at, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v = v << 8 | std::to_integer<std::uint64_t>(at[i]);
  return v;
}

}  // namespace

std::array<std::byte, hello_size> encode(const hello& h) {
  std::array<std::byte, hello_size> out{};
  std::memcpy(out.data(), magic.data(), magic.size());
  out[4] = std::byte(version);
  out[5] = std::byte(h.what);
  put_be(&out[8], h.request_bytes, 4);
  put_be(&out[12], h.response_bytes, 4);
  return out;
}

std::expected<hello, std::string> decode(std::span<const std::byte, hello_size> bytes) {
  if (std::memcmp(bytes.data(), magic.data(), magic.size()) != 0)
    return std::unexpected(std::string("not an affine-rr client (no \"afrr\" hello)"));
  if (std::to_integer<std::uint8_t>(bytes[4]) != version)
    return std::unexpected(fmt::format("hello version {}, this server speaks {}", std::to_integer<int>(bytes[4]), version));
  hello h;
  h.request_bytes = std::uint32_t(get_be(&bytes[8], 4));
  h.response_bytes = std::uint32_t(get_be(&bytes[12], 4));
  switch (std::to_integer<std::uint8_t>(bytes[5])) {
    case std::uint8_t(mode::request_response):
      h.what = mode::request_response;
      if (h.request_bytes == 0 || h.response_bytes == 0 || h.request_bytes > max_message_bytes ||
          h.response_bytes > max_message_bytes)
        return std::unexpected(fmt::format("message sizes {} and {} are not in 1..{}", h.request_bytes,
                                           h.response_bytes, max_message_bytes));
      return h;
    case std::uint8_t(mode::bulk):
      h.what = mode::bulk;
      return h;
    default:
      return std::unexpected(fmt::format("unknown mode {}", std::to_integer<int>(bytes[5])));
  }
}

std::array<std::byte, 8> encode_u64(std::uint64_t v) {
  std::array<std::byte, 8> out;
  put_be(out.data(), v, 8);
  return out;
}

std::uint64_t decode_u64(std::span<const std::byte, 8> bytes) { return get_be(bytes.data(), 8); }

}  // namespace affine_rr
