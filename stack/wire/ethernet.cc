#include "stack/wire/ethernet.hh"

#include "stack/wire/endian.hh"

namespace affine::stack {
namespace {

constexpr be16_field outer_type{12};
constexpr be16_field tag_control{14};  // present when outer_type is 0x8100
constexpr be16_field inner_type{16};

constexpr std::uint16_t service_tag = 0x88a8;  // 802.1ad, the outer tag of QinQ

bool is_tag(std::uint16_t type) { return type == std::uint16_t(ether_type::vlan) || type == service_tag; }

}  // namespace

std::expected<ethernet_view, parse_error> ethernet_view::parse(std::span<const std::byte> frame) noexcept {
  if (frame.size() < untagged_length) return std::unexpected(parse_error::truncated);
  const std::uint16_t outer = outer_type.get(frame);
  if (!is_tag(outer)) return ethernet_view(frame, untagged_length);
  // One 802.1Q tag only: stacked tags (QinQ) belong to switches, not to a host.
  if (outer == service_tag) return std::unexpected(parse_error::unsupported);
  if (frame.size() < untagged_length + tag_length) return std::unexpected(parse_error::truncated);
  if (is_tag(inner_type.get(frame))) return std::unexpected(parse_error::unsupported);
  return ethernet_view(frame, untagged_length + tag_length);
}

ether_type ethernet_view::type() const noexcept {
  return ether_type(header_length_ == untagged_length ? outer_type.get(frame_) : inner_type.get(frame_));
}

std::optional<vlan_tag> ethernet_view::vlan() const noexcept {
  if (header_length_ == untagged_length) return std::nullopt;
  const std::uint16_t tci = tag_control.get(frame_);
  return vlan_tag{std::uint8_t(tci >> 13), (tci & 0x1000) != 0, std::uint16_t(tci & 0x0fff)};
}

std::expected<std::size_t, emit_error> emit_ethernet(const ethernet_header& h, std::span<std::byte> out) noexcept {
  const std::size_t n = h.length();
  if (out.size() < n) return std::unexpected(emit_error::buffer_too_small);
  mac_field{0}.set(out, h.dst);
  mac_field{6}.set(out, h.src);
  if (h.vlan) {
    outer_type.set(out, std::uint16_t(ether_type::vlan));
    tag_control.set(out, std::uint16_t((h.vlan->priority & 0x7) << 13 | (h.vlan->drop_eligible ? 0x1000 : 0) |
                                       (h.vlan->id & 0x0fff)));
    inner_type.set(out, std::uint16_t(h.type));
  } else {
    outer_type.set(out, std::uint16_t(h.type));
  }
  return n;
}

}  // namespace affine::stack
