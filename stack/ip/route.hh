#pragma once
// Where an IPv4 datagram goes, and how large it may be on its way there.
//
// route_table: one interface's routes, the connected one (its address and
// prefix: on-link) and an optional default gateway (RFC 1122 3.3.1).
// path_mtu_cache: Path MTU Discovery (RFC 1191), a bounded per-destination
// cache fed by ICMP "fragmentation needed" messages; path_mtu_cache6 the
// same for IPv6 (RFC 8201, fed by Packet Too Big).
//
// Addresses are host order. Time is passed in. Precondition: one owner (a
// core); nothing here is thread-safe.

#include <array>
#include <cstdint>
#include <expected>
#include <limits>
#include <optional>
#include <string_view>

#include "stack/ip/addr_map.hh"

namespace affine::stack {

struct interface_config {
  std::uint32_t address = 0;
  std::uint8_t prefix_length = 24;
  std::optional<std::uint32_t> gateway{};
};

enum class route_error : std::uint8_t {
  bad_prefix_length,  // over 32
  bad_address,        // not an address a host may hold (RFC 1122 3.2.1.3), or its subnet's network or broadcast address
  bad_gateway,        // not another host on the interface's subnet
};
std::string_view to_string(route_error e);

class route_table {
 public:
  static std::expected<route_table, route_error> make(const interface_config& config);
  // An interface without IPv4 (an IPv6-only port): address 0, and no
  // destination but 0.0.0.0 itself on the link, which nothing sends to.
  static route_table none() { return route_table(0, ~std::uint32_t(0), std::nullopt); }
  bool has_address() const { return address_ != 0; }

  // The address to resolve on the link for `dst`: dst itself when on-link
  // (broadcast and multicast included), the gateway otherwise, nullopt when
  // there is no route. The caller handles is_local(dst) before. Inline: once
  // per packet sent, and GCC returns an out-of-line optional through memory
  // (a store-forwarding stall).
  std::optional<std::uint32_t> next_hop(std::uint32_t dst) const {
    // RFC 1122 3.2.1.3 (a), (g): "this network" and loopback addresses
    // never leave the host.
    if (dst >> 24 == 0 || dst >> 24 == 127) return std::nullopt;
    // RFC 1122 3.3.1.1: on-link destinations are sent to directly; the
    // limited broadcast (3.3.6) and multicast (RFC 1112 6.4, 224.0.0.0/4)
    // go out on the link as they are.
    if (on_link(dst) || dst == 0xffffffff || dst >> 28 == 0xe) return dst;
    // RFC 1122 3.3.1.1: everything else goes through the gateway, if any.
    return gateway_;
  }

  bool is_local(std::uint32_t dst) const { return dst == address_; }
  // The limited broadcast or this subnet's directed broadcast (RFC 1122 3.2.1.3 (c), (d)).
  bool is_broadcast(std::uint32_t dst) const;
  bool on_link(std::uint32_t dst) const { return (dst & mask_) == (address_ & mask_); }

  std::uint32_t address() const { return address_; }
  std::uint32_t mask() const { return mask_; }
  std::optional<std::uint32_t> gateway() const { return gateway_; }

 private:
  route_table(std::uint32_t address, std::uint32_t mask, std::optional<std::uint32_t> gateway)
      : address_(address), mask_(mask), gateway_(gateway) {}

  // RFC 3021: a /31 has two hosts and no broadcast; a /32 has no neighbours.
  bool has_directed_broadcast() const { return ~mask_ > 1; }

  std::uint32_t address_;
  std::uint32_t mask_;
  std::optional<std::uint32_t> gateway_;
};

struct path_mtu_config {
  std::uint32_t capacity = 64;     // destinations remembered
  std::uint32_t interface_mtu = 1500;
  // The lowest estimate taken from an ICMP message: Linux's min_pmtu
  // (512 + 20 + 20). A forged "fragmentation needed" with a tiny MTU would
  // otherwise make a connection crawl in tiny segments (RFC 5927 7); a path
  // that is really narrower gets its datagrams without DF and is fragmented
  // by its routers (see may_fragment()).
  std::uint32_t floor = 552;
  // RFC 1191 4: the estimate may be raised again no sooner than 5 minutes
  // after a Datagram Too Big; the RFC recommends twice that.
  std::uint64_t expiry_ns = 600'000'000'000;
  // RFC 1191 4: never below 68 octets (RFC 791 3.2: every internet module
  // forwards that much unfragmented).
  std::uint32_t min_mtu = 68;
};

// IPv6's (RFC 8201): no link is narrower than 1280 (RFC 8200 5), so the
// floor and the minimum are 1280; a smaller Packet Too Big is ignored
// (RFC 8201 4, and RFC 8021: no atomic fragments instead).
inline path_mtu_config ipv6_path_mtu_config(std::uint32_t interface_mtu) {
  return {.interface_mtu = interface_mtu, .floor = 1280, .min_mtu = 1280};
}

// Key: the destination, an IPv4 address (host order) or IPv6 one.
template <class Key>
class path_mtu_cache_of {
 public:
  static constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();

  struct counters {
    std::uint64_t lowered = 0;        // estimates lowered by an ICMP message
    std::uint64_t below_min = 0;      // messages ignored: next-hop MTU under min_mtu (or 0, an old router)
    std::uint64_t not_lower = 0;      // messages ignored: not below the current estimate
    std::uint64_t floor_clamped = 0;  // messages whose MTU was raised to the floor
    std::uint64_t evicted = 0;        // estimates pushed out by a full cache
    std::uint64_t expired = 0;        // estimates forgotten after expiry_ns
  };

  explicit path_mtu_cache_of(const path_mtu_config& config = {});

  // ICMP destination unreachable, fragmentation needed and DF set (RFC 792
  // code 4) for a datagram to `dst`, with the next-hop MTU of RFC 1191 4.
  // Returns true when the estimate for dst went down (resend smaller).
  bool on_frag_needed(const Key& dst, std::uint32_t next_hop_mtu, std::uint64_t now_ns);

  // The largest datagram to send to dst now.
  std::uint32_t path_mtu(const Key& dst, std::uint64_t now_ns) const;

  // True when the path reported an MTU under the floor: send to dst with DF
  // clear so the narrow hop may fragment (Linux "locks" such a route's MTU
  // and clears DF the same way).
  bool may_fragment(const Key& dst, std::uint64_t now_ns) const;

  // Forgets estimates older than expiry_ns; returns how many.
  std::uint32_t expire(std::uint64_t now_ns);

  // When expire() next has work, or no_deadline. May be early, never late.
  std::uint64_t next_deadline() const { return next_deadline_; }

  std::uint32_t size() const { return entries_.size(); }
  const counters& counts() const { return counts_; }

 private:
  struct entry {
    std::uint32_t mtu = 0;
    bool below_floor = false;
    std::uint64_t expires = 0;
  };

  const entry* fresh(const Key& dst, std::uint64_t now_ns) const;
  entry* add(const Key& dst);

  path_mtu_config config_;
  addr_map<entry, Key> entries_;
  std::uint64_t next_deadline_ = no_deadline;
  counters counts_;
};

using path_mtu_cache = path_mtu_cache_of<std::uint32_t>;
using path_mtu_cache6 = path_mtu_cache_of<std::array<std::uint8_t, 16>>;

}  // namespace affine::stack
