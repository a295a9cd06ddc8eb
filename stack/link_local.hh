#pragma once
// A port's IPv6 link-local address (fe80::/64, RFC 4291 2.5.6): from the
// MAC as a modified EUI-64 (RFC 4291 2.5.1 and Appendix A, what RFC 2464 4
// says for Ethernet), or as a stable, semantically opaque interface
// identifier (RFC 7217, which RFC 8064 recommends): the same on every
// start for one secret and interface, telling nothing of the hardware.

#include <array>
#include <cstdint>
#include <string_view>

#include "stack/wire/ethernet.hh"
#include "stack/wire/ipv6.hh"

namespace affine::stack {

inline constexpr ipv6_bytes link_local_prefix{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

// fe80:: and the MAC with ff:fe in its middle and the universal/local bit
// inverted: 52:54:00:12:34:56 gives fe80::5054:ff:fe12:3456.
ipv6_bytes eui64_link_local(const mac_address& mac);

// RFC 7217 5: the interface identifier is the low 64 bits of
// F(Prefix, Net_Iface, Network_ID, DAD_Counter, secret_key), F being
// SipHash-2-4 keyed with the secret (a PRF, as 5 asks), Network_ID empty.
// An identifier RFC 5453 reserves is skipped by counting DAD_Counter up
// (5, step 4). `prefix`'s first 64 bits are kept.
ipv6_bytes stable_address(const ipv6_bytes& prefix, std::string_view net_iface,
                          const std::array<std::uint8_t, 16>& secret, std::uint8_t dad_counter = 0);

// The secret when the configuration gives none: SipHash of
// /etc/machine-id, so one machine keeps its addresses across starts;
// random (and said so in the log) where the file is missing.
std::array<std::uint8_t, 16> machine_secret();

}  // namespace affine::stack
