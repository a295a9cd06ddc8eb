#include "stack/wire/mld.hh"

#include <cassert>

#include "stack/wire/endian.hh"
#include "stack/wire/icmpv6.hh"

namespace affine::stack {
namespace {

constexpr std::size_t hop_by_hop_length = 8;
constexpr std::size_t report_header_length = 8;
constexpr std::size_t record_length = 20;  // no sources, no auxiliary data

// RFC 3810 5: every MLD message has hop limit 1, so it never leaves the link.
constexpr std::uint8_t mld_hop_limit = 1;

// RFC 2711 2.1: the Router Alert option, type 5 (the high bits 00: a node
// that does not know it skips it), two bytes of value, 0 for MLD.
constexpr std::uint8_t router_alert = 5;
constexpr std::uint16_t router_alert_mld = 0;
constexpr std::uint8_t pad_n = 1;  // RFC 8200 4.2

// The Version 2 Multicast Listener Report (RFC 3810 5.2) after its
// checksum: reserved, Nr of Mcast Address Records.
constexpr be16_field record_count{6};
// A Multicast Address Record (5.2.4).
constexpr u8_field record_type{0};
constexpr u8_field aux_data_length{1};
constexpr be16_field source_count{2};
constexpr ipv6_address_field multicast_address{4};

}  // namespace

std::expected<std::size_t, emit_error> emit_mld_report(const ipv6_bytes& src, std::span<const mld_record> records,
                                                       std::span<std::byte> out) noexcept {
  assert(is_link_local(src) || is_unspecified(src));
  const std::size_t icmp_length = report_header_length + record_length * records.size();
  const std::size_t payload_length = hop_by_hop_length + icmp_length;
  if (payload_length > 0xffff) return std::unexpected(emit_error::too_long);
  const std::size_t n = ipv6_view::header_length + payload_length;
  if (out.size() < n) return std::unexpected(emit_error::buffer_too_small);

  (void)emit_ipv6({.src = src,
                   .dst = all_mldv2_routers,
                   .next = next_header::hop_by_hop,
                   .hop_limit = mld_hop_limit,
                   .payload_length = std::uint16_t(payload_length)},
                  out);
  const auto hop_by_hop = out.subspan(ipv6_view::header_length, hop_by_hop_length);
  hop_by_hop[0] = std::byte(next_header::icmpv6);
  hop_by_hop[1] = std::byte(0);  // Hdr Ext Len: 8 bytes in all
  hop_by_hop[2] = std::byte(router_alert);
  hop_by_hop[3] = std::byte(2);
  store_be16(hop_by_hop.data() + 4, router_alert_mld);
  hop_by_hop[6] = std::byte(pad_n);  // the two bytes left: PadN of no data
  hop_by_hop[7] = std::byte(0);

  const auto icmp = out.subspan(ipv6_view::header_length + hop_by_hop_length, icmp_length);
  icmp[0] = std::byte(icmpv6_type::mldv2_report);
  icmp[1] = std::byte(0);
  store_be32(icmp.data() + 4, 0);  // reserved, and the count written next
  record_count.set(icmp, std::uint16_t(records.size()));
  for (std::size_t k = 0; k < records.size(); ++k) {
    const auto r = icmp.subspan(report_header_length + k * record_length, record_length);
    record_type.set(r, std::uint8_t(records[k].type));
    aux_data_length.set(r, 0);
    source_count.set(r, 0);
    multicast_address.set(r, records[k].group);
  }
  // RFC 8200 8.1: the pseudo-header's Next Header is the upper layer's, 58.
  set_icmpv6_checksum(icmp, src, all_mldv2_routers);
  return n;
}

}  // namespace affine::stack
