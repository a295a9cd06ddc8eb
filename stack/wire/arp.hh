#pragma once
// ARP for IPv4 over Ethernet (RFC 826), the only pairing this stack speaks.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>

#include "stack/wire/error.hh"
#include "stack/wire/ethernet.hh"

namespace affine::stack {

enum class arp_op : std::uint16_t { request = 1, reply = 2 };

struct arp_packet {
  arp_op op = arp_op::request;
  mac_address sender_mac{};
  std::uint32_t sender_ip = 0;  // host order
  mac_address target_mac{};     // ignored in a request (RFC 826 leaves it unset)
  std::uint32_t target_ip = 0;
  friend constexpr bool operator==(const arp_packet&, const arp_packet&) = default;
};

class arp_view {
 public:
  static constexpr std::size_t length = 28;

  // truncated: under 28 bytes; unsupported: not Ethernet/IPv4, or an
  // operation other than request and reply (RARP, InARP).
  static std::expected<arp_view, parse_error> parse(std::span<const std::byte> bytes) noexcept;

  arp_op op() const noexcept;
  mac_address sender_mac() const noexcept;
  std::uint32_t sender_ip() const noexcept;
  mac_address target_mac() const noexcept;
  std::uint32_t target_ip() const noexcept;
  arp_packet packet() const noexcept { return {op(), sender_mac(), sender_ip(), target_mac(), target_ip()}; }

 private:
  explicit arp_view(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}

  std::span<const std::byte> bytes_;  // exactly `length` bytes
};

// Writes the 28-byte packet; returns 28.
std::expected<std::size_t, emit_error> emit_arp(const arp_packet& p, std::span<std::byte> out) noexcept;

}  // namespace affine::stack
