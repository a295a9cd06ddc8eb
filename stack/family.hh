#pragma once
// The socket API's addresses on the stack: which traffic a socket bound to
// an address takes, and how it reports addresses. As a kernel dual-stack
// socket (RFC 3493 3.7): a socket on :: takes IPv6, and IPv4 too unless
// v6_only, reporting its IPv4 peers as IPv4-mapped addresses (RFC 4291
// 2.5.5.2); one on 0.0.0.0 or an IPv4 address takes IPv4; one on an IPv6
// address takes IPv6 sent to that address.

#include <cstdint>
#include <optional>

#include "affine/address.hh"
#include "stack/flow.hh"

namespace affine::stack {

// The flow address `a` names: IPv4 (given as such or IPv4-mapped) as
// flow.hh writes it, IPv6 as itself.
inline flow_address flow_of(const net::address& a) {
  if (a.is_v4()) return v4_flow(a.v4().value);
  return a.v6().bytes;
}

struct binding {
  bool v4 = false;                      // takes IPv4 traffic
  bool v6 = false;                      // takes IPv6 traffic
  std::optional<flow_address> address;  // only traffic to this address; none: any of ours
  bool mapped = false;                  // reports IPv4 addresses as IPv4-mapped IPv6 ones
  bool serves() const { return v4 || v6; }
  // Whether a datagram or segment to `dst` is for this socket.
  bool takes(const flow_address& dst) const {
    if (!(is_v4(dst) ? v4 : v6)) return false;
    return !address || *address == dst;
  }
  // Whether two sockets on one port would take the same traffic.
  bool overlaps(const binding& o) const {
    if (!((v4 && o.v4) || (v6 && o.v6))) return false;
    return !address || !o.address || *address == *o.address;
  }
};

// Nothing served: an IPv4-mapped address with v6_only (Linux refuses it).
inline binding bind_of(const net::address& a, bool v6_only) {
  if (a.is_v4()) {
    binding b{.v4 = true, .v6 = false, .address = std::nullopt, .mapped = false};
    if (!a.is_unspecified()) b.address = v4_flow(a.v4().value);
    return b;
  }
  if (a.v6().is_unspecified()) return {.v4 = !v6_only, .v6 = true, .address = std::nullopt, .mapped = true};
  if (a.v6().mapped_v4()) {
    if (v6_only) return {};
    return {.v4 = true, .address = flow_of(a), .mapped = true};
  }
  return {.v6 = true, .address = flow_of(a), .mapped = true};
}

// A flow address as a socket reports it: IPv6 as itself; IPv4 as an IPv4
// address, or IPv4-mapped where the socket is of the IPv6 family.
inline net::address reported(const flow_address& a, bool mapped) {
  if (is_v4(a) && !mapped) return net::ipv4_address{v4_address(a)};
  return net::ipv6_address{a};
}

inline net::endpoint endpoint_of(const flow_address& a, std::uint16_t port) { return {reported(a, false), port}; }

}  // namespace affine::stack
