#include "stack/wire/ipv4.hh"

#include <cassert>

#include "stack/wire/endian.hh"

namespace affine::stack {
namespace {

constexpr u8_field version_ihl{0};
constexpr u8_field type_of_service{1};
constexpr be16_field total_length_field{2};
constexpr be16_field identification{4};
constexpr be16_field flags_fragment{6};
constexpr u8_field time_to_live{8};
constexpr u8_field protocol_field{9};
constexpr be16_field header_checksum{10};
constexpr be32_field source{12};
constexpr be32_field destination{16};

constexpr std::uint16_t flag_reserved = 0x8000;
constexpr std::uint16_t flag_df = 0x4000;
constexpr std::uint16_t flag_mf = 0x2000;
constexpr std::uint16_t offset_mask = 0x1fff;  // in 8-byte units

// The checks a datagram and a quoted datagram share: version and IHL.
// Returns the header length in bytes.
std::expected<std::size_t, parse_error> check_header(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < ipv4_view::min_header_length) return std::unexpected(parse_error::truncated);
  const std::uint8_t vi = version_ihl.get(bytes);
  if (vi >> 4 != 4) return std::unexpected(parse_error::bad_version);
  const std::size_t header_length = std::size_t(vi & 0x0f) * 4;
  if (header_length < ipv4_view::min_header_length || header_length > bytes.size())
    return std::unexpected(parse_error::bad_header_length);
  return header_length;
}

}  // namespace

std::expected<ipv4_view, parse_error> ipv4_view::parse(std::span<const std::byte> bytes,
                                                       checksum_mode mode) noexcept {
  const auto header_length = check_header(bytes);
  if (!header_length) return std::unexpected(header_length.error());
  // RFC 791 3.1 "Total Length": the datagram ends there; bytes after it are
  // Ethernet padding (frames under 60 bytes) and are dropped here.
  const std::size_t total = total_length_field.get(bytes);
  if (total < *header_length || total > bytes.size()) return std::unexpected(parse_error::bad_total_length);
  if (mode == checksum_mode::software) {
    checksum_accumulator c;
    c.add(bytes.first(*header_length));
    if (!c.verifies()) return std::unexpected(parse_error::bad_checksum);
  }
  // RFC 791 3.1 "Flags": bit 0 is reserved and must be zero.
  if (flags_fragment.get(bytes) & flag_reserved) return std::unexpected(parse_error::bad_flags);
  return ipv4_view(bytes.first(total));
}

std::size_t ipv4_view::header_length() const noexcept { return std::size_t(version_ihl.get(packet_) & 0x0f) * 4; }
std::uint8_t ipv4_view::tos() const noexcept { return type_of_service.get(packet_); }
std::uint16_t ipv4_view::id() const noexcept { return identification.get(packet_); }
bool ipv4_view::dont_fragment() const noexcept { return flags_fragment.get(packet_) & flag_df; }
bool ipv4_view::more_fragments() const noexcept { return flags_fragment.get(packet_) & flag_mf; }
std::uint16_t ipv4_view::fragment_offset() const noexcept {
  return std::uint16_t((flags_fragment.get(packet_) & offset_mask) * 8);
}
std::uint8_t ipv4_view::ttl() const noexcept { return time_to_live.get(packet_); }
ip_protocol ipv4_view::protocol() const noexcept { return ip_protocol(protocol_field.get(packet_)); }
std::uint16_t ipv4_view::checksum() const noexcept { return header_checksum.get(packet_); }
std::uint32_t ipv4_view::src() const noexcept { return source.get(packet_); }
std::uint32_t ipv4_view::dst() const noexcept { return destination.get(packet_); }

ipv4_header ipv4_view::header() const noexcept {
  return {.src = src(),
          .dst = dst(),
          .protocol = protocol(),
          .ttl = ttl(),
          .tos = tos(),
          .id = id(),
          .dont_fragment = dont_fragment(),
          .more_fragments = more_fragments(),
          .fragment_offset = fragment_offset(),
          .payload_length = std::uint16_t(payload().size())};
}

std::expected<ipv4_quote, parse_error> parse_ipv4_quote(std::span<const std::byte> bytes) noexcept {
  const auto header_length = check_header(bytes);
  if (!header_length) return std::unexpected(header_length.error());
  if (bytes.size() < *header_length + 8) return std::unexpected(parse_error::truncated);
  return ipv4_quote{.src = source.get(bytes),
                    .dst = destination.get(bytes),
                    .protocol = ip_protocol(protocol_field.get(bytes)),
                    .id = identification.get(bytes),
                    .transport = bytes.subspan(*header_length)};
}

std::expected<std::size_t, emit_error> emit_ipv4(const ipv4_header& h, std::span<std::byte> out,
                                                 checksum_mode mode) noexcept {
  assert(h.fragment_offset % 8 == 0);
  constexpr std::size_t n = ipv4_view::min_header_length;
  if (n + h.payload_length > 0xffff) return std::unexpected(emit_error::too_long);
  if (out.size() < n) return std::unexpected(emit_error::buffer_too_small);
  const std::uint16_t length = std::uint16_t(n + h.payload_length);
  const std::uint16_t fragment = std::uint16_t((h.dont_fragment ? flag_df : 0) | (h.more_fragments ? flag_mf : 0) |
                                               (h.fragment_offset / 8 & offset_mask));
  version_ihl.set(out, 0x45);
  type_of_service.set(out, h.tos);
  total_length_field.set(out, length);
  identification.set(out, h.id);
  flags_fragment.set(out, fragment);
  time_to_live.set(out, h.ttl);
  protocol_field.set(out, std::uint8_t(h.protocol));
  source.set(out, h.src);
  destination.set(out, h.dst);
  std::uint16_t sum = 0;
  if (mode == checksum_mode::software) {
    // Summed from the values, not read back: loading the header just
    // stored a field at a time stalls on store forwarding.
    checksum_accumulator c;
    c.add16(std::uint16_t(0x45 << 8 | h.tos));
    c.add16(length);
    c.add16(h.id);
    c.add16(fragment);
    c.add16(std::uint16_t(h.ttl << 8 | std::uint8_t(h.protocol)));
    c.add32(h.src);
    c.add32(h.dst);
    sum = c.checksum();
  }
  header_checksum.set(out, sum);
  return n;
}

}  // namespace affine::stack
