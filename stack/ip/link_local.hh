#pragma once
// A port's IPv6 interface identifiers: its link-local address (fe80::/64,
// RFC 4291 2.5.6) from the MAC as a modified EUI-64 (RFC 4291 2.5.1 and
// Appendix A, what RFC 2464 4 says for Ethernet), or a stable, semantically
// opaque identifier under any /64 (RFC 7217, which RFC 8064 recommends):
// the same on every start for one secret and interface, telling nothing of
// the hardware. Pure functions: the owner (stack.cc) picks which, and the
// secret (stack_config::stable_secret).

#include <array>
#include <cstdint>
#include <string_view>

#include "stack/tcp/function_ref.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/ipv6.hh"

namespace affine::stack {

inline constexpr ipv6_bytes link_local_prefix{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

// fe80:: and the MAC with ff:fe in its middle and the universal/local bit
// inverted: 52:54:00:12:34:56 gives fe80::5054:ff:fe12:3456.
ipv6_bytes eui64_link_local(const mac_address& mac);

// RFC 7217 5: the interface identifier is the low 64 bits of
// F(Prefix, Net_Iface, Network_ID, DAD_Counter, secret_key), F being
// SipHash-2-4 keyed with the secret (a PRF, as 5 asks) over the prefix's
// first 64 bits, the interface's name, no Network_ID and the counter (one
// byte). An identifier RFC 5453 reserves is refused and F taken again with
// DAD_Counter one higher (also 5). `prefix`'s first 64 bits are kept.
// After a DAD failure the owner asks again with dad_counter + 1 (RFC 7217
// 6).
ipv6_bytes stable_address(const ipv6_bytes& prefix, std::string_view net_iface,
                          const std::array<std::uint8_t, 16>& secret, std::uint8_t dad_counter = 0);

// RFC 7217 5's walk: F(DAD_Counter) for the first counter from
// `dad_counter` on whose identifier RFC 5453 does not reserve. About one
// value in 2^40 is reserved; the one-byte counter bounds the walk (its last
// value is taken whatever it gives). stable_address's loop.
std::uint64_t first_unreserved(std::uint8_t dad_counter, tcp::function_ref<std::uint64_t(std::uint8_t)> f);

// The interface identifiers RFC 5453 reserves (the IANA registry it set
// up): the Subnet-Router anycast 0 (RFC 4291 2.6.1), the modified EUI-64s
// of IANA's Ethernet block 0200:5eff:fe00:0 to 0200:5eff:feff:ffff (RFC
// 4291, one of them Proxy Mobile IPv6's, RFC 6543), and the subnet anycast
// fdff:ffff:ffff:ff80 to fdff:ffff:ffff:ffff (RFC 2526).
bool reserved_interface_id(std::uint64_t iid);

}  // namespace affine::stack
