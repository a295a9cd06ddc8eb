#pragma once
// Multicast Listener Discovery version 2 (RFC 3810): the report a host
// sends when it joins or leaves a group, so that MLD-snooping switches and
// multicast routers pass it the group's packets (the solicited-node groups
// Neighbor Discovery needs among them, RFC 4861 7.2.1). Queries are not
// read: a host that repeats its changes (RFC 3810 6.1) and never answers a
// query is dropped from a group only when a router's state times out.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>

#include "stack/wire/error.hh"
#include "stack/wire/ipv6.hh"

namespace affine::stack {

// RFC 3810 5.2.14: reports go to all MLDv2-capable routers.
inline constexpr ipv6_bytes all_mldv2_routers{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x16};

// Record types (RFC 3810 5.2.12) that make sense without sources: the
// current state (answers to a query) and a filter mode change. ALLOW and
// BLOCK (5, 6) name sources, which this stack does not filter on.
enum class mld_record_type : std::uint8_t {
  mode_is_include = 1,
  mode_is_exclude = 2,
  change_to_include = 3,
  change_to_exclude = 4,
};

// One Multicast Address Record with no sources (RFC 3810 5.2.4).
struct mld_record {
  mld_record_type type = mld_record_type::change_to_exclude;
  ipv6_bytes group{};
};

// RFC 3810 6.1: joining is a change to EXCLUDE mode with no sources (every
// source), leaving a change to INCLUDE mode with none.
constexpr mld_record mld_join(const ipv6_bytes& group) noexcept { return {mld_record_type::change_to_exclude, group}; }
constexpr mld_record mld_leave(const ipv6_bytes& group) noexcept { return {mld_record_type::change_to_include, group}; }

// The bytes emit_mld_report writes for `records` records: the IPv6 header,
// the Hop-by-Hop header and the ICMPv6 report.
constexpr std::size_t mld_report_length(std::size_t records) noexcept { return 40 + 8 + 8 + 20 * records; }

// Writes a whole IPv6 packet: a Version 2 Multicast Listener Report (RFC
// 3810 5.2) of `records` from `src` to all_mldv2_routers, with hop limit 1
// and a Hop-by-Hop header holding a Router Alert option (RFC 3810 5, RFC
// 2711), its checksum computed. Returns mld_report_length(records.size()).
// too_long: more records than a Payload Length counts. A report that
// would not fit the link's MTU is the caller's to split (RFC 3810 5.2.15).
// Precondition: `src` is link-local, or the unspecified address while the
// interface has none (RFC 3810 5).
std::expected<std::size_t, emit_error> emit_mld_report(const ipv6_bytes& src, std::span<const mld_record> records,
                                                       std::span<std::byte> out) noexcept;

}  // namespace affine::stack
