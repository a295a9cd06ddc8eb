#pragma once
// Ethernet II frames (IEEE 802.3 clause 3) with at most one IEEE 802.1Q tag.
// The frame as the driver delivers it: no preamble, no FCS.

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>

#include "stack/wire/endian.hh"
#include "stack/wire/error.hh"

namespace affine::stack {

using mac_address = std::array<std::uint8_t, 6>;
inline constexpr mac_address broadcast_mac{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// A MAC address at a byte offset (ARP carries two of them too).
using mac_field = bytes_field<6>;

enum class ether_type : std::uint16_t { ipv4 = 0x0800, arp = 0x0806, vlan = 0x8100, ipv6 = 0x86dd };

// The 802.1Q tag control information.
struct vlan_tag {
  std::uint8_t priority = 0;  // PCP, 3 bits
  bool drop_eligible = false; // DEI
  std::uint16_t id = 0;       // VID, 12 bits
  friend constexpr bool operator==(const vlan_tag&, const vlan_tag&) = default;
};

struct ethernet_header {
  mac_address dst{};
  mac_address src{};
  ether_type type{};  // of the payload, after the tag when there is one
  std::optional<vlan_tag> vlan{};

  std::size_t length() const noexcept { return vlan ? 18 : 14; }
  friend constexpr bool operator==(const ethernet_header&, const ethernet_header&) = default;
};

class ethernet_view {
 public:
  static constexpr std::size_t untagged_length = 14;
  static constexpr std::size_t tag_length = 4;

  // truncated: shorter than the header; unsupported: a second (stacked) tag.
  static std::expected<ethernet_view, parse_error> parse(std::span<const std::byte> frame) noexcept;

  mac_address dst() const noexcept { return mac_field{0}.get(frame_); }
  mac_address src() const noexcept { return mac_field{6}.get(frame_); }
  ether_type type() const noexcept;
  std::optional<vlan_tag> vlan() const noexcept;
  std::size_t header_length() const noexcept { return header_length_; }
  // Everything after the header, link padding included: the network layer
  // trims by its own length field.
  std::span<const std::byte> payload() const noexcept { return frame_.subspan(header_length_); }
  ethernet_header header() const noexcept { return {dst(), src(), type(), vlan()}; }

 private:
  ethernet_view(std::span<const std::byte> frame, std::size_t header_length) noexcept
      : frame_(frame), header_length_(header_length) {}

  std::span<const std::byte> frame_;
  std::size_t header_length_;
};

// Writes the header (14 or 18 bytes); returns its length.
std::expected<std::size_t, emit_error> emit_ethernet(const ethernet_header& h, std::span<std::byte> out) noexcept;

}  // namespace affine::stack
