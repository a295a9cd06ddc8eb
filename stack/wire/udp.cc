#include "stack/wire/udp.hh"

#include <cstring>

#include "stack/wire/endian.hh"
#include "stack/wire/ipv4.hh"

namespace affine::stack {
namespace {

constexpr be16_field source_port{0};
constexpr be16_field destination_port{2};
constexpr be16_field length_field{4};
constexpr be16_field checksum_field{6};

constexpr std::size_t max_datagram_length = 0xffff - ipv4_view::min_header_length;

}  // namespace

std::expected<udp_view, parse_error> udp_view::parse(std::span<const std::byte> bytes, const pseudo_header& ph,
                                                     checksum_mode mode) noexcept {
  if (bytes.size() < header_length) return std::unexpected(parse_error::truncated);
  // RFC 768 "Length": header and data; the IP payload may run past it.
  const std::size_t length = length_field.get(bytes);
  if (length < header_length || length > bytes.size()) return std::unexpected(parse_error::bad_length);
  const auto datagram = bytes.first(length);
  // RFC 768: an all-zero checksum means the sender computed none; RFC 8200
  // 8.1: over IPv6 there is no such thing, and the datagram is dropped.
  const std::uint16_t sum = checksum_field.get(bytes);
  if (sum == 0 && ph.ipv6()) return std::unexpected(parse_error::bad_checksum);
  if (mode == checksum_mode::software && sum != 0 && !ph.verifies(datagram))
    return std::unexpected(parse_error::bad_checksum);
  return udp_view(datagram);
}

std::uint16_t udp_view::src_port() const noexcept { return source_port.get(bytes_); }
std::uint16_t udp_view::dst_port() const noexcept { return destination_port.get(bytes_); }
std::uint16_t udp_view::checksum() const noexcept { return checksum_field.get(bytes_); }

std::expected<std::size_t, emit_error> emit_udp_header(const udp_header& h, std::span<const std::byte> payload,
                                                       const pseudo_header& ph, std::span<std::byte> out,
                                                       checksum_mode mode) noexcept {
  const std::size_t length = udp_view::header_length + payload.size();
  if (length > max_datagram_length) return std::unexpected(emit_error::too_long);
  if (out.size() < udp_view::header_length) return std::unexpected(emit_error::buffer_too_small);
  source_port.set(out, h.src_port);
  destination_port.set(out, h.dst_port);
  length_field.set(out, std::uint16_t(length));
  checksum_field.set(out, 0);
  std::uint16_t sum = ph.checksum(out.first(udp_view::header_length), payload, mode);
  // RFC 768: a computed checksum of zero is sent as all ones, zero meaning "none".
  if (mode == checksum_mode::software && sum == 0) sum = 0xffff;
  checksum_field.set(out, sum);
  return udp_view::header_length;
}

std::expected<std::size_t, emit_error> emit_udp(const udp_header& h, std::span<const std::byte> payload,
                                                const pseudo_header& ph, std::span<std::byte> out,
                                                checksum_mode mode) noexcept {
  const std::size_t length = udp_view::header_length + payload.size();
  if (length > max_datagram_length) return std::unexpected(emit_error::too_long);
  if (out.size() < length) return std::unexpected(emit_error::buffer_too_small);
  // memmove: the payload may already sit in (or near) its place in `out`.
  if (!payload.empty()) std::memmove(out.data() + udp_view::header_length, payload.data(), payload.size());
  const auto placed = out.subspan(udp_view::header_length, payload.size());
  if (const auto n = emit_udp_header(h, placed, ph, out, mode); !n) return n;
  return length;
}

}  // namespace affine::stack
