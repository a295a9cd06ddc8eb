#pragma once
// IPv4 headers (RFC 791). Options are carried past, never interpreted: none
// that a host must act on is in use, and only their length matters here.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>

#include "stack/wire/checksum.hh"
#include "stack/wire/error.hh"

namespace affine::stack {

enum class ip_protocol : std::uint8_t { icmp = 1, tcp = 6, udp = 17 };

struct ipv4_header {
  std::uint32_t src = 0;  // host order
  std::uint32_t dst = 0;
  ip_protocol protocol{};
  std::uint8_t ttl = 64;
  std::uint8_t tos = 0;  // DSCP and ECN (RFC 2474, RFC 3168)
  std::uint16_t id = 0;
  bool dont_fragment = false;
  bool more_fragments = false;
  std::uint16_t fragment_offset = 0;  // in bytes, a multiple of 8
  std::uint16_t payload_length = 0;   // total length less the header
  friend constexpr bool operator==(const ipv4_header&, const ipv4_header&) = default;
};

class ipv4_view {
 public:
  static constexpr std::size_t min_header_length = 20;

  // truncated, bad_version, bad_header_length (IHL under 5 or past the
  // buffer), bad_total_length (under the header or past the buffer),
  // bad_checksum (unless the NIC verified it: checksum_mode::offload),
  // bad_flags (the reserved bit).
  static std::expected<ipv4_view, parse_error> parse(std::span<const std::byte> bytes,
                                                     checksum_mode mode = checksum_mode::software) noexcept;

  std::size_t header_length() const noexcept;
  std::uint16_t total_length() const noexcept { return std::uint16_t(packet_.size()); }
  std::uint8_t tos() const noexcept;
  std::uint16_t id() const noexcept;
  bool dont_fragment() const noexcept;
  bool more_fragments() const noexcept;
  std::uint16_t fragment_offset() const noexcept;  // bytes
  bool is_fragment() const noexcept { return more_fragments() || fragment_offset() != 0; }
  std::uint8_t ttl() const noexcept;
  ip_protocol protocol() const noexcept;
  std::uint16_t checksum() const noexcept;
  std::uint32_t src() const noexcept;
  std::uint32_t dst() const noexcept;
  std::span<const std::byte> options() const noexcept {
    return packet_.subspan(min_header_length, header_length() - min_header_length);
  }
  // Up to the total length: link-layer padding after it is not payload.
  std::span<const std::byte> payload() const noexcept { return packet_.subspan(header_length()); }
  std::span<const std::byte> packet() const noexcept { return packet_; }
  ipv4_header header() const noexcept;

 private:
  explicit ipv4_view(std::span<const std::byte> packet) noexcept : packet_(packet) {}

  std::span<const std::byte> packet_;  // exactly total_length() bytes
};

// The start of a datagram quoted in an ICMP error (RFC 792: the internet
// header and the first 64 bits of its data). The quote is cut short by
// design, so its total length and checksum are not checked.
struct ipv4_quote {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  ip_protocol protocol{};
  std::uint16_t id = 0;
  std::span<const std::byte> transport{};  // at least 8 bytes: ports (TCP, UDP) and the TCP sequence number
};

// truncated (no room for the header and 8 bytes after it), bad_version,
// bad_header_length.
std::expected<ipv4_quote, parse_error> parse_ipv4_quote(std::span<const std::byte> bytes) noexcept;

// Writes a 20-byte header (no options) for a payload of h.payload_length
// bytes; returns 20. too_long: total length over 65535. With
// checksum_mode::offload the checksum field is 0 for the NIC to fill.
// Precondition: h.fragment_offset is a multiple of 8.
std::expected<std::size_t, emit_error> emit_ipv4(const ipv4_header& h, std::span<std::byte> out,
                                                 checksum_mode mode) noexcept;

}  // namespace affine::stack
