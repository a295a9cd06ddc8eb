#pragma once
// ICMPv6 messages (RFC 4443): the 4-byte type, code and checksum every
// message starts with, the type-specific word after it for the messages
// RFC 4443 defines (echo, and the four errors with the packet that caused
// them), and the rest as bytes for Neighbor Discovery (stack/wire/ndp.hh)
// and MLD (stack/wire/mld.hh) to read.
//
// Every type parses. RFC 4443 2.4(a), (b): an unknown informational message
// is dropped and an unknown error passed up to whatever sent the packet it
// quotes, which is the caller's to decide by is_error(); an unknown error is
// read as the four RFC 4443 defines, the quote after an unused word.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>

#include "stack/wire/checksum.hh"
#include "stack/wire/error.hh"
#include "stack/wire/ipv6.hh"

namespace affine::stack {

enum class icmpv6_type : std::uint8_t {
  dest_unreachable = 1,       // RFC 4443 3.1
  packet_too_big = 2,         // 3.2
  time_exceeded = 3,          // 3.3
  parameter_problem = 4,      // 3.4
  echo_request = 128,         // 4.1
  echo_reply = 129,           // 4.2
  mld_query = 130,            // RFC 2710 3, RFC 3810 5.1
  mld_report = 131,           // RFC 2710 3
  mld_done = 132,             // RFC 2710 3
  router_solicitation = 133,  // RFC 4861 4.1
  router_advertisement = 134,     // 4.2
  neighbor_solicitation = 135,    // 4.3
  neighbor_advertisement = 136,   // 4.4
  redirect = 137,                 // 4.5
  mldv2_report = 143,             // RFC 3810 5.2
};

// RFC 4443 2.4(c): an error quotes as much of the packet that caused it as
// fits without the error passing the IPv6 minimum MTU (RFC 8200 5): 1280
// less the IPv6 header and the ICMPv6 header.
inline constexpr std::size_t icmpv6_error_quote_max = 1280 - 40 - 8;

struct icmpv6_message {
  icmpv6_type type = icmpv6_type::echo_request;
  std::uint8_t code = 0;
  std::uint16_t id = 0;        // echo
  std::uint16_t seq = 0;       // echo
  std::uint32_t mtu = 0;       // packet too big
  std::uint32_t pointer = 0;   // parameter problem: the offending byte's offset in the quoted packet
  // Echo: the data to return. An error: the packet that caused it, as much
  // as fits (icmpv6_error_quote_max).
  std::span<const std::byte> data{};
};

class icmpv6_view {
 public:
  static constexpr std::size_t min_length = 4;      // type, code, checksum (RFC 4443 2.1)
  static constexpr std::size_t header_length = 8;   // and the type-specific word of echo and errors

  // The bytes a message of `type` needs before parse hands it out: the
  // fixed part of the types this stack knows (RFC 4861's "ICMP length"
  // rules, RFC 2710 3, RFC 3810 5), 8 for an error, else min_length.
  static std::size_t fixed_length(std::uint8_t type) noexcept;

  // `bytes` is the upper-layer payload of an IPv6 packet from `src` to
  // `dst` (the pseudo-header's addresses, RFC 8200 8.1). truncated (under
  // fixed_length of its type); bad_checksum (unless checksum_mode::offload);
  // an error whose quote is not an IPv6 header fails as parse_ipv6_quote says.
  static std::expected<icmpv6_view, parse_error> parse(std::span<const std::byte> bytes, const ipv6_bytes& src,
                                                       const ipv6_bytes& dst,
                                                       checksum_mode mode = checksum_mode::software) noexcept;

  icmpv6_type type() const noexcept { return icmpv6_type(std::uint8_t(bytes_[0])); }
  std::uint8_t code() const noexcept { return std::uint8_t(bytes_[1]); }
  std::uint16_t checksum() const noexcept;
  // RFC 4443 2.1: types 0 to 127 are errors, 128 to 255 informational.
  bool is_error() const noexcept { return std::uint8_t(type()) < 128; }
  std::uint16_t id() const noexcept;         // echo only
  std::uint16_t seq() const noexcept;        // echo only
  std::uint32_t mtu() const noexcept;        // packet too big only
  std::uint32_t pointer() const noexcept;    // parameter problem only
  // After type, code and checksum: the message body (RFC 4443 2.1).
  std::span<const std::byte> body() const noexcept { return bytes_.subspan(min_length); }
  // After the type-specific word: echo data, an error's quoted packet
  // (empty for a message of 4 to 7 bytes, of a type this stack does not know).
  std::span<const std::byte> data() const noexcept { return bytes_.subspan(std::min(header_length, bytes_.size())); }
  std::span<const std::byte> bytes() const noexcept { return bytes_; }
  // The quoted packet of an error; nullopt for an informational message.
  std::optional<ipv6_quote> quote() const noexcept;
  // Echo and error messages; for the others, type and code.
  icmpv6_message message() const noexcept;

 private:
  explicit icmpv6_view(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}

  std::span<const std::byte> bytes_;  // at least fixed_length(type) bytes
};

// Writes the 8-byte header and copies m.data after it; returns 8 + data
// size. The word after the checksum holds id and seq for echo, mtu for
// packet too big, pointer for parameter problem, else zero. An error
// quotes at most icmpv6_error_quote_max bytes of m.data (RFC 4443 2.4(c));
// the rest is left out. m.data may lie where it is being written (an echo
// reply built in the request's buffer). The checksum is always computed
// here: NICs do not offload ICMPv6.
std::expected<std::size_t, emit_error> emit_icmpv6(const icmpv6_message& m, const ipv6_bytes& src,
                                                   const ipv6_bytes& dst, std::span<std::byte> out) noexcept;

// Fills the checksum field of the ICMPv6 message written in `message`
// (exactly its bytes), from `src` to `dst`: what emit_icmpv6 and the
// Neighbor Discovery and MLD emitters finish with. Precondition: 4 bytes
// or more.
void set_icmpv6_checksum(std::span<std::byte> message, const ipv6_bytes& src, const ipv6_bytes& dst) noexcept;

}  // namespace affine::stack
