#include "stack/wire/arp.hh"

#include "stack/wire/endian.hh"

namespace affine::stack {
namespace {

constexpr be16_field hardware_type{0};
constexpr be16_field protocol_type{2};
constexpr u8_field hardware_length{4};
constexpr u8_field protocol_length{5};
constexpr be16_field operation{6};
constexpr mac_field sender_hardware{8};
constexpr be32_field sender_address{14};
constexpr mac_field target_hardware{18};
constexpr be32_field target_address{24};

constexpr std::uint16_t hardware_ethernet = 1;  // RFC 826 ar$hrd, from the IANA registry

}  // namespace

std::expected<arp_view, parse_error> arp_view::parse(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < length) return std::unexpected(parse_error::truncated);
  // RFC 826 "Packet Reception": a host ignores hardware and protocol types it
  // does not have; the lengths must then be Ethernet's and IPv4's.
  if (hardware_type.get(bytes) != hardware_ethernet || protocol_type.get(bytes) != std::uint16_t(ether_type::ipv4) ||
      hardware_length.get(bytes) != 6 || protocol_length.get(bytes) != 4)
    return std::unexpected(parse_error::unsupported);
  const std::uint16_t op = operation.get(bytes);
  if (op != std::uint16_t(arp_op::request) && op != std::uint16_t(arp_op::reply))
    return std::unexpected(parse_error::unsupported);
  return arp_view(bytes.first(length));
}

arp_op arp_view::op() const noexcept { return arp_op(operation.get(bytes_)); }
mac_address arp_view::sender_mac() const noexcept { return sender_hardware.get(bytes_); }
std::uint32_t arp_view::sender_ip() const noexcept { return sender_address.get(bytes_); }
mac_address arp_view::target_mac() const noexcept { return target_hardware.get(bytes_); }
std::uint32_t arp_view::target_ip() const noexcept { return target_address.get(bytes_); }

std::expected<std::size_t, emit_error> emit_arp(const arp_packet& p, std::span<std::byte> out) noexcept {
  if (out.size() < arp_view::length) return std::unexpected(emit_error::buffer_too_small);
  hardware_type.set(out, hardware_ethernet);
  protocol_type.set(out, std::uint16_t(ether_type::ipv4));
  hardware_length.set(out, 6);
  protocol_length.set(out, 4);
  operation.set(out, std::uint16_t(p.op));
  sender_hardware.set(out, p.sender_mac);
  sender_address.set(out, p.sender_ip);
  target_hardware.set(out, p.target_mac);
  target_address.set(out, p.target_ip);
  return arp_view::length;
}

}  // namespace affine::stack
