#pragma once
// UDP datagrams (RFC 768) over IPv4.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>

#include "stack/wire/checksum.hh"
#include "stack/wire/error.hh"

namespace affine::stack {

struct udp_header {
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  friend constexpr bool operator==(const udp_header&, const udp_header&) = default;
};

class udp_view {
 public:
  static constexpr std::size_t header_length = 8;

  // `bytes` is the IP payload; `ph` the checksum's pseudo-header.
  // truncated; bad_length (the length field under 8 or past the buffer);
  // bad_checksum (unless checksum_mode::offload, or the sender sent none, a
  // zero checksum field, which over IPv6 is itself bad_checksum).
  static std::expected<udp_view, parse_error> parse(std::span<const std::byte> bytes, const pseudo_header& ph,
                                                    checksum_mode mode = checksum_mode::software) noexcept;
  // Over IPv4: the addresses, host order.
  static std::expected<udp_view, parse_error> parse(std::span<const std::byte> bytes, std::uint32_t src_ip,
                                                    std::uint32_t dst_ip,
                                                    checksum_mode mode = checksum_mode::software) noexcept {
    return parse(bytes, pseudo_header::ipv4(src_ip, dst_ip, 17), mode);
  }

  std::uint16_t src_port() const noexcept;
  std::uint16_t dst_port() const noexcept;
  std::uint16_t length() const noexcept { return std::uint16_t(bytes_.size()); }
  std::uint16_t checksum() const noexcept;
  std::span<const std::byte> payload() const noexcept { return bytes_.subspan(header_length); }
  udp_header header() const noexcept { return {src_port(), dst_port()}; }

 private:
  explicit udp_view(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}

  std::span<const std::byte> bytes_;  // exactly length() bytes
};

// Writes the header and a copy of payload; returns 8 + payload size.
// too_long: the datagram would not fit a 65535-byte IP payload. `ph`: the
// pseudo-header (udp's protocol number); or the IPv4 addresses.
std::expected<std::size_t, emit_error> emit_udp(const udp_header& h, std::span<const std::byte> payload,
                                                const pseudo_header& ph, std::span<std::byte> out,
                                                checksum_mode mode) noexcept;
inline std::expected<std::size_t, emit_error> emit_udp(const udp_header& h, std::span<const std::byte> payload,
                                                       std::uint32_t src_ip, std::uint32_t dst_ip,
                                                       std::span<std::byte> out, checksum_mode mode) noexcept {
  return emit_udp(h, payload, pseudo_header::ipv4(src_ip, dst_ip, 17), out, mode);
}

// Writes only the 8-byte header; the caller places the payload after it.
// The length and checksum cover `payload`, the bytes as they will be sent.
std::expected<std::size_t, emit_error> emit_udp_header(const udp_header& h, std::span<const std::byte> payload,
                                                       const pseudo_header& ph, std::span<std::byte> out,
                                                       checksum_mode mode) noexcept;
inline std::expected<std::size_t, emit_error> emit_udp_header(const udp_header& h,
                                                              std::span<const std::byte> payload,
                                                              std::uint32_t src_ip, std::uint32_t dst_ip,
                                                              std::span<std::byte> out, checksum_mode mode) noexcept {
  return emit_udp_header(h, payload, pseudo_header::ipv4(src_ip, dst_ip, 17), out, mode);
}

}  // namespace affine::stack
