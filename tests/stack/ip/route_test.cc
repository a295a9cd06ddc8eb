// One interface's routes: the connected subnet and a default gateway
// (RFC 1122 3.3.1), broadcast forms (RFC 1122 3.2.1.3, RFC 3021) and the
// addresses a host may hold.

#include <gtest/gtest.h>

#include "stack/ip/route.hh"

namespace affine::stack {
namespace {

constexpr std::uint32_t ip(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return std::uint32_t(a) << 24 | std::uint32_t(b) << 16 | std::uint32_t(c) << 8 | d;
}

route_table table(const interface_config& config) {
  auto t = route_table::make(config);
  EXPECT_TRUE(t) << to_string(t.error());
  return *t;
}

const route_table lan = table({.address = ip(192, 168, 1, 10), .prefix_length = 24, .gateway = ip(192, 168, 1, 1)});

TEST(route, OnLinkDestinationIsItsOwnNextHop) {
  EXPECT_EQ(lan.next_hop(ip(192, 168, 1, 77)), ip(192, 168, 1, 77));
  EXPECT_TRUE(lan.on_link(ip(192, 168, 1, 77)));
}

TEST(route, Rfc1122OffLinkDestinationGoesThroughTheGateway) {
  EXPECT_EQ(lan.next_hop(ip(8, 8, 8, 8)), ip(192, 168, 1, 1));
  EXPECT_EQ(lan.next_hop(ip(192, 168, 2, 1)), ip(192, 168, 1, 1));
}

TEST(route, OffLinkDestinationWithoutAGatewayHasNoRoute) {
  const route_table t = table({.address = ip(10, 0, 0, 5), .prefix_length = 8});
  EXPECT_EQ(t.next_hop(ip(10, 200, 0, 1)), ip(10, 200, 0, 1));
  EXPECT_EQ(t.next_hop(ip(11, 0, 0, 1)), std::nullopt);
}

TEST(route, Rfc1122ThisNetworkAndLoopbackDestinationsHaveNoRoute) {
  EXPECT_EQ(lan.next_hop(0), std::nullopt);
  EXPECT_EQ(lan.next_hop(ip(0, 1, 2, 3)), std::nullopt);
  EXPECT_EQ(lan.next_hop(ip(127, 0, 0, 1)), std::nullopt);
}

TEST(route, BroadcastAndMulticastGoOutOnTheLinkAsTheyAre) {
  EXPECT_EQ(lan.next_hop(ip(255, 255, 255, 255)), ip(255, 255, 255, 255));
  EXPECT_EQ(lan.next_hop(ip(192, 168, 1, 255)), ip(192, 168, 1, 255));
  EXPECT_EQ(lan.next_hop(ip(224, 0, 0, 251)), ip(224, 0, 0, 251));
}

TEST(route, OnlyTheInterfaceAddressIsLocal) {
  EXPECT_TRUE(lan.is_local(ip(192, 168, 1, 10)));
  EXPECT_FALSE(lan.is_local(ip(192, 168, 1, 11)));
  EXPECT_FALSE(lan.is_local(ip(192, 168, 1, 255)));
}

TEST(route, Rfc1122LimitedAndDirectedBroadcast) {
  EXPECT_TRUE(lan.is_broadcast(ip(255, 255, 255, 255)));
  EXPECT_TRUE(lan.is_broadcast(ip(192, 168, 1, 255)));
  EXPECT_FALSE(lan.is_broadcast(ip(192, 168, 2, 255)));  // another subnet's: routed, not ours
  EXPECT_FALSE(lan.is_broadcast(ip(192, 168, 1, 254)));
  const route_table t = table({.address = ip(10, 1, 2, 3), .prefix_length = 20});
  EXPECT_TRUE(t.is_broadcast(ip(10, 1, 15, 255)));
  EXPECT_FALSE(t.is_broadcast(ip(10, 1, 2, 255)));
}

TEST(route, Rfc3021SlashThirtyOneHasTwoHostsAndNoBroadcast) {
  const route_table t = table({.address = ip(10, 0, 0, 0), .prefix_length = 31, .gateway = ip(10, 0, 0, 1)});
  EXPECT_FALSE(t.is_broadcast(ip(10, 0, 0, 1)));
  EXPECT_EQ(t.next_hop(ip(10, 0, 0, 1)), ip(10, 0, 0, 1));
  EXPECT_EQ(t.next_hop(ip(1, 1, 1, 1)), ip(10, 0, 0, 1));
}

TEST(route, SlashThirtyTwoHasNoNeighbours) {
  const route_table t = table({.address = ip(10, 0, 0, 7), .prefix_length = 32});
  EXPECT_EQ(t.next_hop(ip(10, 0, 0, 8)), std::nullopt);
  EXPECT_FALSE(t.is_broadcast(ip(10, 0, 0, 7)));
  EXPECT_EQ(route_table::make({.address = ip(10, 0, 0, 7), .prefix_length = 32, .gateway = ip(10, 0, 0, 1)}).error(),
            route_error::bad_gateway);
}

TEST(route, PrefixLongerThan32IsRefused) {
  EXPECT_EQ(route_table::make({.address = ip(10, 0, 0, 1), .prefix_length = 33}).error(),
            route_error::bad_prefix_length);
}

TEST(route, Rfc1122AddressAHostMayNotHoldIsRefused) {
  for (const std::uint32_t a : {ip(0, 0, 0, 0), ip(0, 0, 0, 9), ip(127, 0, 0, 1), ip(224, 0, 0, 1),
                                ip(240, 0, 0, 1), ip(255, 255, 255, 255), ip(192, 168, 1, 0), ip(192, 168, 1, 255)}) {
    const auto t = route_table::make({.address = a, .prefix_length = 24});
    ASSERT_FALSE(t) << std::hex << a;
    EXPECT_EQ(t.error(), route_error::bad_address) << std::hex << a;
  }
}

TEST(route, Rfc1122GatewayMustBeAnotherHostOnTheLink) {
  for (const std::uint32_t g : {ip(192, 168, 2, 1), ip(192, 168, 1, 10), ip(192, 168, 1, 255), ip(192, 168, 1, 0)}) {
    const auto t = route_table::make({.address = ip(192, 168, 1, 10), .prefix_length = 24, .gateway = g});
    ASSERT_FALSE(t) << std::hex << g;
    EXPECT_EQ(t.error(), route_error::bad_gateway) << std::hex << g;
  }
}

TEST(route, ErrorsHaveTheirNames) {
  EXPECT_EQ(to_string(route_error::bad_prefix_length), "bad_prefix_length");
  EXPECT_EQ(to_string(route_error::bad_address), "bad_address");
  EXPECT_EQ(to_string(route_error::bad_gateway), "bad_gateway");
}

}  // namespace
}  // namespace affine::stack
