#pragma once
// TCP headers (RFC 9293 3.1): a checked view over received bytes, and the
// emitters that write a tcp_segment back. Protocol code handles only
// tcp_segment (stack/wire/tcp_segment.hh).

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>

#include "stack/wire/checksum.hh"
#include "stack/wire/error.hh"
#include "stack/wire/seq32.hh"
#include "stack/wire/tcp_options.hh"
#include "stack/wire/tcp_segment.hh"

namespace affine::stack {

// The control bits in header byte 13 (RFC 9293 3.1, RFC 3168 6.1 for ECE, CWR).
namespace tcp_flag {
inline constexpr std::uint8_t fin = 0x01, syn = 0x02, rst = 0x04, psh = 0x08, ack = 0x10, urg = 0x20, ece = 0x40,
                              cwr = 0x80;
}  // namespace tcp_flag

class tcp_view {
 public:
  static constexpr std::size_t min_header_length = 20;

  // `bytes` is the whole segment (the IP payload); `ph` its checksum's
  // pseudo-header (IPv4's or IPv6's). truncated; bad_header_length (data
  // offset under 5 or past the segment); bad_checksum (unless
  // checksum_mode::offload); bad_flags (more than one of SYN, FIN, RST);
  // bad_option (see parse_tcp_options).
  static std::expected<tcp_view, parse_error> parse(std::span<const std::byte> bytes, const pseudo_header& ph,
                                                    checksum_mode mode = checksum_mode::software) noexcept;
  // Over IPv4: the addresses, host order.
  static std::expected<tcp_view, parse_error> parse(std::span<const std::byte> bytes, std::uint32_t src_ip,
                                                    std::uint32_t dst_ip,
                                                    checksum_mode mode = checksum_mode::software) noexcept {
    return parse(bytes, pseudo_header::ipv4(src_ip, dst_ip, 6), mode);
  }

  std::uint16_t src_port() const noexcept;
  std::uint16_t dst_port() const noexcept;
  seq32 seq() const noexcept;
  seq32 ack_number() const noexcept;  // meaningful when ack()
  std::size_t header_length() const noexcept;
  bool fin() const noexcept { return flags() & tcp_flag::fin; }
  bool syn() const noexcept { return flags() & tcp_flag::syn; }
  bool rst() const noexcept { return flags() & tcp_flag::rst; }
  bool psh() const noexcept { return flags() & tcp_flag::psh; }
  bool ack() const noexcept { return flags() & tcp_flag::ack; }
  bool urg() const noexcept { return flags() & tcp_flag::urg; }
  bool ece() const noexcept { return flags() & tcp_flag::ece; }
  bool cwr() const noexcept { return flags() & tcp_flag::cwr; }
  tcp_control control() const noexcept;
  std::uint16_t window() const noexcept;
  std::uint16_t checksum() const noexcept;
  std::uint16_t urgent_pointer() const noexcept;
  std::span<const std::byte> option_bytes() const noexcept {
    return bytes_.subspan(min_header_length, header_length() - min_header_length);
  }
  tcp_options options() const noexcept;  // checked by parse(), read again on each call
  std::span<const std::byte> payload() const noexcept { return bytes_.subspan(header_length()); }
  tcp_segment segment() const noexcept;

 private:
  explicit tcp_view(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}
  std::uint8_t flags() const noexcept;

  std::span<const std::byte> bytes_;
};

// Writes the header, its options and a copy of seg.payload, padded to 4
// bytes; returns the segment's length. Checksum as checksum_mode says
// (offload: the pseudo-header sum, for the NIC to complete). too_long: the
// segment would not fit a 65535-byte IP payload; options_too_long. `ph`:
// the pseudo-header (tcp's protocol number); or the IPv4 addresses.
std::expected<std::size_t, emit_error> emit_tcp(const tcp_segment& seg, const pseudo_header& ph,
                                                std::span<std::byte> out, checksum_mode mode) noexcept;
inline std::expected<std::size_t, emit_error> emit_tcp(const tcp_segment& seg, std::uint32_t src_ip,
                                                       std::uint32_t dst_ip, std::span<std::byte> out,
                                                       checksum_mode mode) noexcept {
  return emit_tcp(seg, pseudo_header::ipv4(src_ip, dst_ip, 6), out, mode);
}

// Writes only the header and options; the caller places the payload after
// them. The checksum covers seg.payload (the bytes as they will be sent).
// Returns the header length.
std::expected<std::size_t, emit_error> emit_tcp_header(const tcp_segment& seg, const pseudo_header& ph,
                                                       std::span<std::byte> out, checksum_mode mode) noexcept;
inline std::expected<std::size_t, emit_error> emit_tcp_header(const tcp_segment& seg, std::uint32_t src_ip,
                                                              std::uint32_t dst_ip, std::span<std::byte> out,
                                                              checksum_mode mode) noexcept {
  return emit_tcp_header(seg, pseudo_header::ipv4(src_ip, dst_ip, 6), out, mode);
}

}  // namespace affine::stack
