#include "stack/wire/icmp.hh"

#include <cstring>

#include "stack/wire/endian.hh"

namespace affine::stack {
namespace {

constexpr u8_field type_field{0};
constexpr u8_field code_field{1};
constexpr be16_field checksum_field{2};
constexpr be16_field identifier{4};     // echo
constexpr be16_field sequence{6};       // echo
constexpr be16_field unused{4};         // destination unreachable
constexpr be16_field next_hop_mtu_field{6};  // destination unreachable, RFC 1191 4

}  // namespace

std::expected<icmp_view, parse_error> icmp_view::parse(std::span<const std::byte> bytes, checksum_mode mode) noexcept {
  if (bytes.size() < header_length) return std::unexpected(parse_error::truncated);
  if (mode == checksum_mode::software) {
    checksum_accumulator c;
    c.add(bytes);
    if (!c.verifies()) return std::unexpected(parse_error::bad_checksum);
  }
  switch (icmp_type(type_field.get(bytes))) {
    case icmp_type::echo_reply:
    case icmp_type::echo_request:
      return icmp_view(bytes);
    case icmp_type::dest_unreachable:
    case icmp_type::time_exceeded:
      if (auto q = parse_ipv4_quote(bytes.subspan(header_length)); !q) return std::unexpected(q.error());
      return icmp_view(bytes);
  }
  return std::unexpected(parse_error::unsupported);
}

icmp_type icmp_view::type() const noexcept { return icmp_type(type_field.get(bytes_)); }
std::uint8_t icmp_view::code() const noexcept { return code_field.get(bytes_); }
std::uint16_t icmp_view::checksum() const noexcept { return checksum_field.get(bytes_); }
std::uint16_t icmp_view::id() const noexcept { return identifier.get(bytes_); }
std::uint16_t icmp_view::seq() const noexcept { return sequence.get(bytes_); }
std::uint16_t icmp_view::next_hop_mtu() const noexcept { return next_hop_mtu_field.get(bytes_); }

std::optional<ipv4_quote> icmp_view::quote() const noexcept {
  if (type() != icmp_type::dest_unreachable && type() != icmp_type::time_exceeded) return std::nullopt;
  return *parse_ipv4_quote(data());  // checked in parse()
}

icmp_message icmp_view::message() const noexcept {
  icmp_message m{.type = type(), .code = code(), .data = data()};
  if (type() == icmp_type::dest_unreachable) {
    m.next_hop_mtu = next_hop_mtu();
  } else if (type() != icmp_type::time_exceeded) {
    m.id = id();
    m.seq = seq();
  }
  return m;
}

std::expected<std::size_t, emit_error> emit_icmp(const icmp_message& m, std::span<std::byte> out) noexcept {
  const std::size_t n = icmp_view::header_length + m.data.size();
  if (out.size() < n) return std::unexpected(emit_error::buffer_too_small);
  // memmove: an echo reply built in the request's buffer has its data
  // already in place (or nearly so).
  if (!m.data.empty()) std::memmove(out.data() + icmp_view::header_length, m.data.data(), m.data.size());
  type_field.set(out, std::uint8_t(m.type));
  code_field.set(out, m.code);
  checksum_field.set(out, 0);
  if (m.type == icmp_type::dest_unreachable || m.type == icmp_type::time_exceeded) {
    unused.set(out, 0);  // time exceeded: all four bytes unused (RFC 792)
    next_hop_mtu_field.set(out, m.type == icmp_type::dest_unreachable ? m.next_hop_mtu : 0);
  } else {
    identifier.set(out, m.id);
    sequence.set(out, m.seq);
  }
  checksum_field.set(out, internet_checksum(out.first(n)));
  return n;
}

}  // namespace affine::stack
