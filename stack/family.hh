#pragma once
// The socket API's addresses of either family on the stack's IPv4 path. A
// socket on an IPv6 address serves IPv4 through IPv4-mapped addresses (RFC
// 4291 2.5.5.2, RFC 3493 3.7): a listener or UDP port on :: takes IPv4
// unless v6_only, and reports its IPv4 peers as ::ffff:a.b.c.d, as a
// kernel's dual-stack socket does. IPv6 itself does not reach these
// sockets yet (issue 21): its other addresses are refused with
// EAFNOSUPPORT.

#include <cstdint>
#include <optional>

#include "affine/address.hh"

namespace affine::stack {

// The IPv4 address `a` names: an IPv4 address or an IPv4-mapped IPv6 one.
inline std::optional<std::uint32_t> v4_of(const net::address& a) {
  if (a.is_v4()) return a.v4().value;
  if (auto m = a.v6().mapped_v4()) return m->value;
  return std::nullopt;
}

// Where a socket binds, for IPv4 traffic: `any` (0.0.0.0, or :: without
// v6_only), one IPv4 address, or nothing this stack can serve.
struct v4_binding {
  bool serves = false;  // false: refuse with EAFNOSUPPORT
  bool any = false;
  std::uint32_t address = 0;  // when !any
  bool mapped = false;        // report IPv4 addresses as IPv4-mapped IPv6 ones
};

inline v4_binding bind_v4(const net::address& a, bool v6_only) {
  if (a.is_v4()) return {.serves = true, .any = a.is_unspecified(), .address = a.v4().value};
  if (a.v6().is_unspecified()) return {.serves = !v6_only, .any = true, .mapped = true};
  if (auto m = a.v6().mapped_v4(); m && !v6_only) return {.serves = true, .address = m->value, .mapped = true};
  return {};
}

// An IPv4 address as a socket of the binding's family reports it.
inline net::address reported(std::uint32_t v4, bool mapped) {
  if (mapped) return net::ipv6_address::v4_mapped(net::ipv4_address{v4});
  return net::ipv4_address{v4};
}

}  // namespace affine::stack
