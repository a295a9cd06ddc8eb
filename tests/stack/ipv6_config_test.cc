// A port's IPv6 configuration (issue 21): ip and gateway take either
// family, as the stack gets them (stack_config_from), and the link-local
// address derived for the port (RFC 4291 2.5.1 modified EUI-64, RFC 7217
// stable identifiers).

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "affine/address.hh"
#include "affine/affine.hh"
#include "stack/from_config.hh"
#include "stack/link_local.hh"

namespace affine::stack {
namespace {

ipv6_bytes v6(std::string_view text) { return net::ipv6_address::parse(text).value().bytes; }

std::expected<stack_config, std::string> port(std::string_view keys) {
  const std::string toml = "[[port]]\ndriver = \"dpdk\"\neal = [\"--vdev=net_ring0\"]\n" + std::string(keys);
  auto s = config::load_string(config_schema(), toml, "affine.toml");
  if (!s) return std::unexpected(s.error());
  return stack_config_from(*s, s->tables("port")[0]);
}

TEST(ipv6_config, OneStringStillGivesTheIpv4AddressAlone) {
  auto sc = port("ip = \"10.77.0.2/24\"\ngateway = \"10.77.0.1\"\n");
  ASSERT_TRUE(sc.has_value()) << sc.error();
  EXPECT_EQ(sc->address, 0x0a4d0002u);
  EXPECT_EQ(sc->prefix_length, 24);
  EXPECT_EQ(sc->gateway, 0x0a4d0001u);
  EXPECT_TRUE(sc->ipv6.empty());
  EXPECT_FALSE(sc->gateway6.has_value());
  // The file's default: a stable link-local address, DAD, RAs taken.
  EXPECT_EQ(sc->link_local, stack_config::link_local_mode::stable);
  EXPECT_EQ(sc->dad_transmits, 1u);
  EXPECT_TRUE(sc->accept_router_advertisements);
}

TEST(ipv6_config, AListTakesBothFamiliesAndAGatewayForEach) {
  auto sc = port("ip = [\"fd77::2/64\", \"10.77.0.2/24\", \"2001:db8::7/48\"]\ngateway = [\"fe80::1\", \"10.77.0.1\"]\n"
                 "link_local = \"eui64\"\ndad_transmits = 3\nrouter_advertisements = false\n"
                 "stable_secret = \"000102030405060708090a0b0c0d0e0f\"\n");
  ASSERT_TRUE(sc.has_value()) << sc.error();
  EXPECT_EQ(sc->address, 0x0a4d0002u);
  ASSERT_EQ(sc->ipv6.size(), 2u);
  EXPECT_EQ(sc->ipv6[0], (ipv6_prefix_address{v6("fd77::2"), 64}));
  EXPECT_EQ(sc->ipv6[1], (ipv6_prefix_address{v6("2001:db8::7"), 48}));
  EXPECT_EQ(sc->gateway6, v6("fe80::1"));
  EXPECT_EQ(sc->gateway, 0x0a4d0001u);
  EXPECT_EQ(sc->link_local, stack_config::link_local_mode::eui64);
  EXPECT_EQ(sc->dad_transmits, 3u);
  EXPECT_FALSE(sc->accept_router_advertisements);
  EXPECT_EQ(sc->stable_secret[15], 0x0f);
  // A gateway inside one of the port's prefixes is on the link too.
  EXPECT_TRUE(port("ip = [\"10.77.0.2/24\", \"fd77::2/64\"]\ngateway = \"fd77::1\"\n").has_value());
}

TEST(ipv6_config, WhatCannotWorkTogetherNamesTheKey) {
  EXPECT_EQ(port("ip = [\"10.77.0.2/24\", \"10.78.0.2/24\"]\n").error(),
            "affine.toml:4: port[0].ip: 10.78.0.2/24: the stack serves one IPv4 address per port");
  EXPECT_EQ(port("ip = \"fd77::2/64\"\n").error().substr(0, 96),
            "affine.toml:4: port[0].ip: a dpdk port carries the userspace stack and needs an IPv4 address, li");
  EXPECT_EQ(port("ip = [\"10.77.0.2/24\", \"ff02::1/64\"]\n").error(),
            "affine.toml:4: port[0].ip: ff02::1/64 is no address a host interface holds (RFC 4291 2.5)");
  EXPECT_EQ(port("ip = [\"10.77.0.2/24\", \"fd77::2/64\"]\ngateway = \"2001:db8::1\"\n").error(),
            "affine.toml:5: port[0].gateway: 2001:db8::1 is neither link-local nor inside one of the port's IPv6 "
            "prefixes");
  EXPECT_EQ(port("ip = \"10.77.0.2/24\"\ngateway = [\"fe80::1\", \"fe80::2\"]\n").error(),
            "affine.toml:5: port[0].gateway: more than one IPv6 gateway");
  std::string many = "ip = [\"10.77.0.2/24\"";
  for (int i = 1; i <= 9; ++i) many += ", \"fd77::" + std::to_string(i) + "/64\"";
  EXPECT_EQ(port(many + "]\n").error(), "affine.toml:4: port[0].ip: more than 8 IPv6 addresses");
  EXPECT_FALSE(port("ip = \"10.77.0.2/24\"\nstable_secret = \"00\"\n").has_value());
}

// RFC 4291 Appendix A; the address Linux gives a port with this MAC.
TEST(link_local, Eui64InsertsFffeAndInvertsTheUniversalLocalBit) {
  EXPECT_EQ(eui64_link_local({0x52, 0x54, 0x00, 0x12, 0x34, 0x56}), v6("fe80::5054:ff:fe12:3456"));
  EXPECT_EQ(eui64_link_local({0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc}), v6("fe80::21b:21ff:feaa:bbcc"));
}

// RFC 7217 5: stable for one prefix, interface and secret; another of any
// of them, or another DAD counter, gives another identifier.
TEST(link_local, StableAddressesDependOnPrefixInterfaceSecretAndCounter) {
  const std::array<std::uint8_t, 16> secret{1, 2, 3};
  const ipv6_bytes a = stable_address(link_local_prefix, "eth0", secret);
  EXPECT_EQ(a, stable_address(link_local_prefix, "eth0", secret));
  EXPECT_TRUE(same_prefix(a, link_local_prefix, 64));
  EXPECT_NE(a, stable_address(link_local_prefix, "eth1", secret));
  EXPECT_NE(a, stable_address(link_local_prefix, "eth0", {1, 2, 4}));
  EXPECT_NE(a, stable_address(link_local_prefix, "eth0", secret, 1));
  const ipv6_bytes global = stable_address(v6("fd77::"), "eth0", secret);
  EXPECT_TRUE(same_prefix(global, v6("fd77::"), 64));
  EXPECT_NE(std::vector(global.begin() + 8, global.end()), std::vector(a.begin() + 8, a.end()));
}

TEST(link_local, TheMachineSecretIsTheSameEachTime) {
  if (!std::filesystem::exists("/etc/machine-id")) GTEST_SKIP() << "no /etc/machine-id: the secret is random";
  EXPECT_EQ(machine_secret(), machine_secret());
  EXPECT_NE(machine_secret(), (std::array<std::uint8_t, 16>{}));
}

}  // namespace
}  // namespace affine::stack
