#pragma once
// Initial sequence numbers, RFC 6528 3:
//   ISN = M + F(localip, localport, remoteip, remoteport, secretkey)
// with M a clock ticking every 4 microseconds and F SipHash-2-4 keyed with
// a secret chosen at start-up.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "stack/flow.hh"
#include "stack/wire/seq32.hh"

namespace affine::stack::tcp {

using siphash_key = std::array<std::uint8_t, 16>;

// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF").
std::uint64_t siphash_2_4(const siphash_key& key, std::span<const std::byte> message);
// A key from std::random_device.
siphash_key random_siphash_key();

// RFC 6528 3's connection-id (local IP, local port, remote IP, remote port)
// in network byte order at the start of `out`: 12 bytes for an IPv4 flow,
// 36 for an IPv6 one (returned); a fixed order keeps the hashes over it
// portable.
inline constexpr std::size_t max_connection_id = 36;
std::size_t put_connection_id(const flow_tuple& t, std::span<std::byte, max_connection_id> out);
// `bytes` bytes of `v`, big-endian, at `out`.
void put_be(std::span<std::byte> out, std::uint32_t v, std::size_t bytes);

class isn_generator {
 public:
  explicit isn_generator(siphash_key secret) : secret_(secret) {}
  // A generator keyed from std::random_device.
  static isn_generator from_random_device();

  seq32 next(const flow_tuple& t, std::uint64_t now_ns) const;

 private:
  siphash_key secret_;
};

}  // namespace affine::stack::tcp
