// A port's interface identifiers: the modified EUI-64 of its MAC (RFC 4291
// 2.5.1, Appendix A) and stable, opaque ones (RFC 7217 5), never one RFC
// 5453 reserves.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "affine/address.hh"
#include "stack/ip/ipv6_interface.hh"
#include "stack/ip/link_local.hh"

namespace affine::stack {
namespace {

ipv6_bytes v6(std::string_view text) { return net::ipv6_address::parse(text).value().bytes; }

std::uint64_t interface_id(const ipv6_bytes& a) {
  std::uint64_t iid = 0;
  for (std::size_t i = 8; i < 16; ++i) iid = iid << 8 | a[i];
  return iid;
}

const std::array<std::uint8_t, 16> secret{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                          0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};

// What Linux derives for these MACs (ip -6 addr on an interface with
// addr_gen_mode eui64).
TEST(link_local, Eui64InsertsFffeAndInvertsTheUniversalLocalBit_RFC4291_2_5_1) {
  EXPECT_EQ(eui64_link_local({0x52, 0x54, 0x00, 0x12, 0x34, 0x56}), v6("fe80::5054:ff:fe12:3456"));
  EXPECT_EQ(eui64_link_local({0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc}), v6("fe80::21b:21ff:feaa:bbcc"));
}

// Appendix A: cccccc0gcccccccc|ccccccccmmmmmmmm|mmmmmmmmmmmmmmmm becomes
// cccccc1gcccccccc|cccccccc11111111|11111110mmmmmmmm|mmmmmmmmmmmmmmmm: the
// universal/local bit (0x02 of the first byte) inverted, nothing else of
// the MAC touched, the group bit kept.
TEST(link_local, Eui64KeepsEveryOtherBitOfTheMac_RFC4291_AppendixA) {
  EXPECT_EQ(eui64_link_local({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), v6("fe80::fdff:ffff:feff:ffff"));
  EXPECT_EQ(eui64_link_local({0x00, 0x00, 0x00, 0x00, 0x00, 0x00}), v6("fe80::200:ff:fe00:0"));
  EXPECT_EQ(eui64_link_local({0x03, 0x00, 0x00, 0x00, 0x00, 0x01}), v6("fe80::100:ff:fe00:1"));
}

TEST(link_local, StableAddressIsTheSameForTheSameInputs_RFC7217_5) {
  const ipv6_bytes a = stable_address(link_local_prefix, "eth0", secret);
  EXPECT_EQ(a, stable_address(link_local_prefix, "eth0", secret));
  EXPECT_TRUE(same_prefix(a, link_local_prefix, 64));
  EXPECT_NE(interface_id(a), 0u);
  const ipv6_bytes global = stable_address(v6("fd77::"), "eth0", secret);
  EXPECT_TRUE(same_prefix(global, v6("fd77::"), 64));
  // Only the prefix's first 64 bits are kept and hashed.
  EXPECT_EQ(global, stable_address(v6("fd77::1234:5678"), "eth0", secret));
}

// RFC 7217 5: another prefix, interface, secret or DAD counter gives another
// identifier.
TEST(link_local, StableAddressDependsOnPrefixInterfaceSecretAndCounter_RFC7217_5) {
  const ipv6_bytes a = stable_address(link_local_prefix, "eth0", secret);
  EXPECT_NE(a, stable_address(link_local_prefix, "eth1", secret));
  EXPECT_NE(a, stable_address(link_local_prefix, "", secret));
  std::array<std::uint8_t, 16> other = secret;
  other[15] ^= 1;
  EXPECT_NE(a, stable_address(link_local_prefix, "eth0", other));
  EXPECT_NE(a, stable_address(link_local_prefix, "eth0", secret, 1));
  EXPECT_NE(stable_address(link_local_prefix, "eth0", secret, 1), stable_address(link_local_prefix, "eth0", secret, 2));
  EXPECT_NE(interface_id(a), interface_id(stable_address(v6("fd77::"), "eth0", secret)));
}

// RFC 5453 and its IANA registry, each range at its edges.
TEST(link_local, ReservedInterfaceIdsAreThoseRfc5453Lists_RFC5453) {
  EXPECT_TRUE(reserved_interface_id(0));
  EXPECT_FALSE(reserved_interface_id(1));
  EXPECT_FALSE(reserved_interface_id(0x02005efffdffffffull));
  EXPECT_TRUE(reserved_interface_id(0x02005efffe000000ull));
  EXPECT_TRUE(reserved_interface_id(0x02005efffe005213ull));  // Proxy Mobile IPv6 (RFC 6543)
  EXPECT_TRUE(reserved_interface_id(0x02005efffeffffffull));
  EXPECT_FALSE(reserved_interface_id(0x02005eff00000000ull));
  EXPECT_FALSE(reserved_interface_id(0x02005effff000000ull));
  EXPECT_FALSE(reserved_interface_id(0x02005efeffffffffull));
  EXPECT_FALSE(reserved_interface_id(0xfdffffffffffff7full));
  EXPECT_TRUE(reserved_interface_id(0xfdffffffffffff80ull));
  EXPECT_TRUE(reserved_interface_id(0xfdffffffffffffffull));
  EXPECT_FALSE(reserved_interface_id(0xfe00000000000000ull));
  EXPECT_FALSE(reserved_interface_id(0xffffffffffffffffull));
}

// RFC 7217 5: a reserved identifier is refused and F taken again with the
// next DAD_Counter; at the counter's last value the walk ends.
TEST(link_local, AReservedIdentifierCountsTheDadCounterUp_RFC7217_5) {
  std::vector<unsigned> asked;
  const auto f = [&](std::uint8_t counter) -> std::uint64_t {
    asked.push_back(counter);
    if (counter == 3) return 0;                      // Subnet-Router anycast
    if (counter == 4) return 0xfdffffffffffffffull;  // RFC 2526 subnet anycast
    if (counter == 5) return 0x02005efffe005213ull;  // IANA's Ethernet block
    return 0x1000 + counter;
  };
  EXPECT_EQ(first_unreserved(3, f), 0x1006u);
  EXPECT_EQ(asked, (std::vector<unsigned>{3, 4, 5, 6}));
  EXPECT_EQ(first_unreserved(0, f), 0x1000u);
  int calls = 0;
  EXPECT_EQ(first_unreserved(0xff,
                             [&](std::uint8_t) {
                               ++calls;
                               return std::uint64_t{0};
                             }),
            0u);
  EXPECT_EQ(calls, 1);
}

// Many secrets, interfaces and counters: no identifier is reserved, and the
// identifiers spread (no two alike).
TEST(link_local, StableAddressesAreNeverReservedAndSpread_RFC7217_5) {
  std::vector<std::uint64_t> seen;
  std::array<std::uint8_t, 16> key = secret;
  for (std::uint8_t k = 0; k < 16; ++k) {
    key[0] = k;
    for (const char* iface : {"eth0", "eth1", "ens1f0", "0000:03:00.0"}) {
      for (std::uint8_t counter = 0; counter < 4; ++counter) {
        const std::uint64_t iid = interface_id(stable_address(link_local_prefix, iface, key, counter));
        EXPECT_FALSE(reserved_interface_id(iid));
        seen.push_back(iid);
      }
    }
  }
  std::ranges::sort(seen);
  EXPECT_EQ(std::ranges::adjacent_find(seen), seen.end());
}

}  // namespace
}  // namespace affine::stack
