// A port's IPv6 configuration (issue 21): ip and gateway take either
// family, as the stack gets them (stack_config_from), with the link-local
// settings and their secret. The identifiers themselves:
// tests/stack/ip/link_local_test.cc.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "affine/address.hh"
#include "affine/affine.hh"
#include "stack/from_config.hh"
#include "stack/ip/ipv6_interface.hh"

namespace affine::stack {
namespace {

ipv6_bytes v6(std::string_view text) { return net::ipv6_address::parse(text).value().bytes; }

std::expected<stack_config, std::string> port(std::string_view keys) {
  const std::string toml = "[[port]]\ndriver = \"dpdk\"\neal = [\"--vdev=net_ring0\"]\n" + std::string(keys);
  auto s = config::load_string(config_schema(), toml, "affine.toml");
  if (!s) return std::unexpected(s.error());
  return stack_config_from(*s, s->tables("port")[0], 1);
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

TEST(ipv6_config, ASecondIpv4AddressIsRefused) {
  EXPECT_EQ(port("ip = [\"10.77.0.2/24\", \"10.78.0.2/24\"]\n").error(),
            "affine.toml:4: port[0].ip: 10.78.0.2/24: the stack serves one IPv4 address per port");
}

TEST(ipv6_config, AnIpv6AddressAloneMakesAnIpv6OnlyPortAndNoAddressIsRefused) {
  const auto sc = port("ip = \"fd77::2/64\"\n");
  ASSERT_TRUE(sc.has_value()) << sc.error();
  EXPECT_EQ(sc->address, 0u);
  EXPECT_EQ(sc->ipv6.size(), 1u);
  EXPECT_EQ(port("ip = \"\"\n").error(),
            "affine.toml:4: port[0].ip: a dpdk port carries the userspace stack and needs an address, like "
            "ip = \"10.77.0.2/24\" (or [\"10.77.0.2/24\", \"fd77::2/64\"], or \"fd77::2/64\" alone)");
}

TEST(ipv6_config, BadIpv6TextIsNamedByFileLineAndElement) {
  EXPECT_EQ(port("ip = [\"10.77.0.2/24\",\n      \"fd77::zz/64\"]\n").error(),
            "affine.toml:5: port[0].ip[1]: \"fd77::zz/64\" is not an IPv4 or IPv6 address with prefix length "
            "(allowed: like \"10.77.0.2/24\" or \"fd77::2/64\", or \"\")");
  EXPECT_EQ(port("ip = \"10.77.0.2/24\"\ngateway = [\"10.77.0.1\", \"fe80::1::2\"]\n").error(),
            "affine.toml:5: port[0].gateway[1]: \"fe80::1::2\" is not an IPv4 or IPv6 address (allowed: like "
            "\"10.77.0.1\" or \"fe80::1\", or \"\")");
}

// RFC 4291 2.5: no multicast, unspecified, loopback or IPv4-mapped address
// is one an interface holds.
TEST(ipv6_config, AnAddressNoInterfaceHoldsIsRefused_RFC4291_2_5) {
  for (const char* bad : {"ff02::1/64", "::/64", "::1/128", "::ffff:10.0.0.1/96"}) {
    EXPECT_EQ(port(fmt::format("ip = [\"10.77.0.2/24\", \"{}\"]\n", bad)).error(),
              fmt::format("affine.toml:4: port[0].ip: {} is no address a host interface holds (RFC 4291 2.5)", bad));
  }
}

TEST(ipv6_config, AnIpv6AddressListedTwiceIsRefused) {
  EXPECT_EQ(port("ip = [\"10.77.0.2/24\", \"fd77::2/64\", \"fd77:0::2/48\"]\n").error(),
            "affine.toml:4: port[0].ip: fd77:0::2/48: the address is listed twice");
}

TEST(ipv6_config, MoreThanEightIpv6AddressesAreRefused) {
  std::string eight = "ip = [\"10.77.0.2/24\"";
  for (int i = 1; i <= 8; ++i) eight += fmt::format(", \"fd77::{}/64\"", i);
  EXPECT_TRUE(port(eight + "]\n").has_value());
  EXPECT_EQ(port(eight + ", \"fd77::9/64\"]\n").error(), "affine.toml:4: port[0].ip: more than 8 IPv6 addresses");
}

TEST(ipv6_config, OneGatewayPerFamily) {
  EXPECT_EQ(port("ip = \"10.77.0.2/24\"\ngateway = [\"fe80::1\", \"fe80::2\"]\n").error(),
            "affine.toml:5: port[0].gateway: more than one IPv6 gateway");
  EXPECT_EQ(port("ip = \"10.77.0.2/24\"\ngateway = [\"10.77.0.1\", \"fe80::1\", \"10.77.0.9\"]\n").error(),
            "affine.toml:5: port[0].gateway: more than one IPv4 gateway");
  auto v6_only = port("ip = \"10.77.0.2/24\"\ngateway = \"fe80::1\"\n");
  ASSERT_TRUE(v6_only.has_value()) << v6_only.error();
  EXPECT_FALSE(v6_only->gateway.has_value());
  EXPECT_EQ(v6_only->gateway6, v6("fe80::1"));
}

// RFC 4861 4.2, 5.2: a router is addressed by its link-local address; one
// inside the port's prefixes is on the link too. Anything else is not.
TEST(ipv6_config, AnIpv6GatewayIsOnTheLink_RFC4861_5_2) {
  EXPECT_EQ(port("ip = [\"10.77.0.2/24\", \"fd77::2/64\"]\ngateway = \"2001:db8::1\"\n").error(),
            "affine.toml:5: port[0].gateway: 2001:db8::1 is neither link-local nor inside one of the port's IPv6 "
            "prefixes");
  EXPECT_EQ(port("ip = [\"10.77.0.2/24\", \"fd77::2/64\"]\ngateway = \"fd77:0:0:1::1\"\n").error(),
            "affine.toml:5: port[0].gateway: fd77:0:0:1::1 is neither link-local nor inside one of the port's IPv6 "
            "prefixes");
  EXPECT_TRUE(port("ip = [\"10.77.0.2/24\", \"fd77::2/48\"]\ngateway = \"fd77:0:0:1::1\"\n").has_value());
  EXPECT_EQ(port("ip = [\"10.77.0.2/24\", \"fd77::2/0\"]\ngateway = \"ff02::2\"\n").error(),
            "affine.toml:5: port[0].gateway: ff02::2 is no unicast address a router holds");
  EXPECT_EQ(port("ip = \"10.77.0.2/24\"\ngateway = \"fe80::1\"\nlink_local = \"off\"\n").error(),
            "affine.toml:5: port[0].gateway: fe80::1: an IPv6 gateway, but the port has no IPv6 address (none in "
            "ip, link_local = \"off\")");
}

TEST(ipv6_config, TheStableSecretIsReadAsHexOrDerivedFromTheMachine) {
  auto given = port("ip = \"10.77.0.2/24\"\nstable_secret = \"00112233445566778899AABBCCDDEEFF\"\n");
  ASSERT_TRUE(given.has_value()) << given.error();
  EXPECT_EQ(given->stable_secret, (std::array<std::uint8_t, 16>{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                                                0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}));
  EXPECT_EQ(port("ip = \"10.77.0.2/24\"\nstable_secret = \"00\"\n").error(),
            "affine.toml:5: port[0].stable_secret: \"00\" is not a 128-bit secret (allowed: 32 hex digits, or \"\" "
            "for one derived from /etc/machine-id)");
  auto derived = port("ip = \"10.77.0.2/24\"\n");
  ASSERT_TRUE(derived.has_value()) << derived.error();
  EXPECT_EQ(derived->stable_secret, machine_secret());
  // No stable address, no secret to derive.
  auto eui64 = port("ip = \"10.77.0.2/24\"\nlink_local = \"eui64\"\n");
  ASSERT_TRUE(eui64.has_value()) << eui64.error();
  EXPECT_EQ(eui64->stable_secret, (std::array<std::uint8_t, 16>{}));
}

TEST(ipv6_config, TheMachineSecretIsTheSameEachTime) {
  if (!std::filesystem::exists("/etc/machine-id")) GTEST_SKIP() << "no /etc/machine-id: the secret is random";
  const std::array<std::uint8_t, 16> secret = machine_secret();
  EXPECT_EQ(secret, machine_secret());
  EXPECT_NE(secret, (std::array<std::uint8_t, 16>{}));
  // 128 bits: two hashes under two keys, not one twice.
  EXPECT_FALSE(std::equal(secret.begin(), secret.begin() + 8, secret.begin() + 8));
}

}  // namespace
}  // namespace affine::stack
