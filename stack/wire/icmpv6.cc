#include "stack/wire/icmpv6.hh"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "stack/wire/endian.hh"

namespace affine::stack {
namespace {

constexpr u8_field type_field{0};
constexpr u8_field code_field{1};
constexpr be16_field checksum_field{2};
constexpr be16_field identifier{4};     // echo (RFC 4443 4.1)
constexpr be16_field sequence{6};       // echo
constexpr be32_field mtu_field{4};      // packet too big (3.2)
constexpr be32_field pointer_field{4};  // parameter problem (3.4)
constexpr be32_field unused{4};         // destination unreachable, time exceeded (3.1, 3.3)

bool is_echo(icmpv6_type t) noexcept { return t == icmpv6_type::echo_request || t == icmpv6_type::echo_reply; }

}  // namespace

std::size_t icmpv6_view::fixed_length(std::uint8_t type) noexcept {
  if (type < 128) return header_length;  // RFC 4443 2.1: errors, the quote after a word
  switch (icmpv6_type(type)) {
    case icmpv6_type::echo_request:
    case icmpv6_type::echo_reply: return header_length;              // RFC 4443 4.1, 4.2
    case icmpv6_type::mld_query:                                     // RFC 2710 3: 24 bytes (RFC 3810 8.1: a
    case icmpv6_type::mld_report:                                    // longer query is MLDv2)
    case icmpv6_type::mld_done: return 24;
    case icmpv6_type::router_solicitation: return 8;                 // RFC 4861 6.1.1
    case icmpv6_type::router_advertisement: return 16;               // RFC 4861 6.1.2
    case icmpv6_type::neighbor_solicitation:                         // RFC 4861 7.1.1
    case icmpv6_type::neighbor_advertisement: return 24;             // RFC 4861 7.1.2
    case icmpv6_type::redirect: return 40;                           // RFC 4861 8.1
    case icmpv6_type::mldv2_report: return 8;                        // RFC 3810 5.2
    default: return min_length;
  }
}

std::expected<icmpv6_view, parse_error> icmpv6_view::parse(std::span<const std::byte> bytes, const ipv6_bytes& src,
                                                           const ipv6_bytes& dst, checksum_mode mode) noexcept {
  if (bytes.size() < min_length || bytes.size() < fixed_length(type_field.get(bytes)))
    return std::unexpected(parse_error::truncated);
  // RFC 4443 2.3: the checksum covers the pseudo-header (RFC 8200 8.1,
  // Next Header 58) and the whole message.
  if (mode == checksum_mode::software && !ipv6_transport_verifies(src, dst, next_header::icmpv6, bytes))
    return std::unexpected(parse_error::bad_checksum);
  const icmpv6_view v(bytes);
  if (v.is_error()) {
    if (const auto q = parse_ipv6_quote(v.data()); !q) return std::unexpected(q.error());
  }
  return v;
}

std::uint16_t icmpv6_view::checksum() const noexcept { return checksum_field.get(bytes_); }
std::uint16_t icmpv6_view::id() const noexcept { return identifier.get(bytes_); }
std::uint16_t icmpv6_view::seq() const noexcept { return sequence.get(bytes_); }
std::uint32_t icmpv6_view::mtu() const noexcept { return mtu_field.get(bytes_); }
std::uint32_t icmpv6_view::pointer() const noexcept { return pointer_field.get(bytes_); }

std::optional<ipv6_quote> icmpv6_view::quote() const noexcept {
  if (!is_error()) return std::nullopt;
  return *parse_ipv6_quote(data());  // checked in parse()
}

icmpv6_message icmpv6_view::message() const noexcept {
  icmpv6_message m{.type = type(), .code = code()};
  if (is_echo(m.type)) {
    m.id = id();
    m.seq = seq();
  } else if (m.type == icmpv6_type::packet_too_big) {
    m.mtu = mtu();
  } else if (m.type == icmpv6_type::parameter_problem) {
    m.pointer = pointer();
  }
  if (is_echo(m.type) || is_error()) m.data = data();
  return m;
}

std::expected<std::size_t, emit_error> emit_icmpv6(const icmpv6_message& m, const ipv6_bytes& src,
                                                   const ipv6_bytes& dst, std::span<std::byte> out) noexcept {
  const bool error = std::uint8_t(m.type) < 128;
  // RFC 4443 2.4(c): the error packet stays within the minimum MTU.
  const auto data = error ? m.data.first(std::min(m.data.size(), icmpv6_error_quote_max)) : m.data;
  const std::size_t n = icmpv6_view::header_length + data.size();
  if (n > 0xffff) return std::unexpected(emit_error::too_long);  // past an IPv6 Payload Length
  if (out.size() < n) return std::unexpected(emit_error::buffer_too_small);
  // memmove: an echo reply built in the request's buffer has its data
  // already in place (or nearly so).
  if (!data.empty()) std::memmove(out.data() + icmpv6_view::header_length, data.data(), data.size());
  type_field.set(out, std::uint8_t(m.type));
  code_field.set(out, m.code);
  if (is_echo(m.type)) {
    identifier.set(out, m.id);
    sequence.set(out, m.seq);
  } else if (m.type == icmpv6_type::packet_too_big) {
    mtu_field.set(out, m.mtu);
  } else if (m.type == icmpv6_type::parameter_problem) {
    pointer_field.set(out, m.pointer);
  } else {
    unused.set(out, 0);  // RFC 4443 3.1, 3.3: zero on send
  }
  set_icmpv6_checksum(out.first(n), src, dst);
  return n;
}

void set_icmpv6_checksum(std::span<std::byte> message, const ipv6_bytes& src, const ipv6_bytes& dst) noexcept {
  assert(message.size() >= icmpv6_view::min_length);
  checksum_field.set(message, 0);
  checksum_field.set(message, ipv6_transport_checksum(src, dst, next_header::icmpv6, message, {},
                                                      checksum_mode::software));
}

}  // namespace affine::stack
