// One port's IPv6 addressing at virtual time: Duplicate Address Detection
// as RFC 4862 5.4 runs it, the groups a host joins (RFC 4291 2.8, RFC 4861
// 7.2.1), where packets go (RFC 4861 5.2), which source they get (RFC 6724
// 5), the default routers advertisements give (RFC 4861 6.3.4) and the
// first hops Redirects give (8.3).

#include <gtest/gtest.h>

#include "affine/address.hh"
#include "stack/ip/ipv6_interface.hh"
#include "stack/wire/ndp.hh"

namespace affine::stack {
namespace {

constexpr std::uint64_t s = 1'000'000'000;

ipv6_bytes v6(std::string_view text) { return net::ipv6_address::parse(text).value().bytes; }

const ipv6_bytes link_local = v6("fe80::5054:ff:fe12:3456");
const ipv6_bytes global = v6("fd77::2");
const ipv6_bytes other_global = v6("2001:db8:1::9");

ipv6_interface_config two_addresses(std::uint32_t dad_transmits = 1) {
  return {.addresses = {{link_local, 64}, {global, 64}}, .dad_transmits = dad_transmits};
}

TEST(ipv6_interface, DadProbesEachAddressThenMakesItPreferredAfterRetransTimer) {
  ipv6_interface i(two_addresses(2));
  i.start(0);
  // RFC 4862 5.4: tentative, so only DAD's Neighbor Discovery reaches it.
  EXPECT_EQ(i.classify(global), ipv6_interface::match::tentative);
  EXPECT_FALSE(i.source_for(global).has_value());
  auto d = i.expire(0);
  EXPECT_EQ(std::vector(d.probe.begin(), d.probe.end()), (std::vector<ipv6_bytes>{link_local, global}));
  EXPECT_TRUE(d.ready.empty());
  EXPECT_EQ(i.next_deadline(), 1 * s);
  EXPECT_TRUE(i.expire(1 * s - 1).probe.empty());
  d = i.expire(1 * s);  // 5.4.2: DupAddrDetectTransmits probes, RetransTimer apart
  EXPECT_EQ(d.probe.size(), 2u);
  EXPECT_EQ(i.classify(global), ipv6_interface::match::tentative);
  d = i.expire(2 * s);  // RetransTimer after the last: no one answered
  EXPECT_TRUE(d.probe.empty());
  EXPECT_EQ(std::vector(d.ready.begin(), d.ready.end()), (std::vector<ipv6_bytes>{link_local, global}));
  EXPECT_EQ(i.classify(global), ipv6_interface::match::unicast);
  EXPECT_EQ(i.next_deadline(), ipv6_interface::no_deadline);
  EXPECT_EQ(i.counts().dad_probes, 4u);
}

TEST(ipv6_interface, AnAddressSomeoneClaimsDuringDadIsADuplicateAndNeverUsed) {
  ipv6_interface i(two_addresses());
  i.start(0);
  (void)i.expire(0);
  EXPECT_TRUE(i.claimed(global));  // 5.4.3 / 5.4.4: their NS from ::, or their NA
  EXPECT_FALSE(i.claimed(global));
  const auto d = i.expire(1 * s);
  EXPECT_EQ(std::vector(d.ready.begin(), d.ready.end()), (std::vector<ipv6_bytes>{link_local}));
  EXPECT_EQ(i.classify(global), ipv6_interface::match::none);
  EXPECT_EQ(i.addresses()[1].state, ipv6_address_state::duplicate);
  // 5.4.5: not assigned, so its solicited-node group is left too.
  EXPECT_EQ(i.classify(solicited_node(global)), ipv6_interface::match::none);
  EXPECT_EQ(i.counts().dad_duplicates, 1u);
  // A claim after DAD ended is no duplicate here (the owner answers it).
  EXPECT_FALSE(i.claimed(link_local));
  EXPECT_EQ(i.classify(link_local), ipv6_interface::match::unicast);
}

TEST(ipv6_interface, WithoutDadTransmitsAddressesArePreferredAtOnce) {
  ipv6_interface i(two_addresses(0));
  i.start(0);
  EXPECT_EQ(i.classify(global), ipv6_interface::match::unicast);
  EXPECT_TRUE(i.expire(0).probe.empty());
  EXPECT_EQ(i.next_deadline(), ipv6_interface::no_deadline);
}

TEST(ipv6_interface, TheHostListensToAllNodesAndEachAddresssSolicitedNodeGroup) {
  ipv6_interface_config c = two_addresses(0);
  c.addresses.push_back({v6("fd77::1:2"), 64});  // another low 24 bits
  c.addresses.push_back({v6("fd78::2"), 64});    // the same group as fd77::2: joined once
  ipv6_interface i(c);
  i.start(0);
  const auto g = i.groups();
  EXPECT_EQ(g, (std::vector<ipv6_bytes>{all_nodes, v6("ff02::1:ff12:3456"), v6("ff02::1:ff00:2"),
                                         v6("ff02::1:ff01:2")}));
  EXPECT_EQ(i.classify(all_nodes), ipv6_interface::match::multicast);
  EXPECT_EQ(i.classify(v6("ff02::1:ff00:2")), ipv6_interface::match::multicast);
  EXPECT_EQ(i.classify(v6("ff02::1:ff00:3")), ipv6_interface::match::none);
  EXPECT_EQ(i.classify(all_routers), ipv6_interface::match::none);
  // RFC 2464 7: 33:33 and the group's last four bytes.
  EXPECT_TRUE(i.accepts({0x33, 0x33, 0, 0, 0, 1}));
  EXPECT_TRUE(i.accepts({0x33, 0x33, 0xff, 0x12, 0x34, 0x56}));
  EXPECT_FALSE(i.accepts({0x33, 0x33, 0xff, 0x12, 0x34, 0x57}));
  EXPECT_FALSE(i.accepts({0x33, 0x33, 0, 0, 0, 2}));
}

TEST(ipv6_interface, OnLinkDestinationsAreTheirOwnNextHopTheRestGoToARouter) {
  ipv6_interface i(two_addresses(0));
  i.start(0);
  const ipv6_bytes neighbor = v6("fd77::99");
  EXPECT_EQ(i.next_hop(neighbor, 0), neighbor);              // inside fd77::/64
  EXPECT_EQ(i.next_hop(v6("fe80::1"), 0), v6("fe80::1"));    // link-local: always on-link
  EXPECT_EQ(i.next_hop(all_nodes, 0), all_nodes);
  EXPECT_FALSE(i.next_hop(other_global, 0).has_value());     // no router
  ipv6_interface_config c = two_addresses(0);
  c.gateway = v6("fe80::1");
  ipv6_interface with_gateway(c);
  EXPECT_EQ(with_gateway.next_hop(other_global, 0), v6("fe80::1"));
}

TEST(ipv6_interface, AdvertisedRoutersServeUntilTheirLifetimeEnds) {
  ipv6_interface_config c = two_addresses(0);
  c.max_routers = 1;
  ipv6_interface i(c);
  i.start(0);
  i.on_router_advertisement(v6("fe80::1"), 30, 0);
  i.on_router_advertisement(v6("fe80::2"), 30, 0);  // past max_routers: counted, not kept
  EXPECT_EQ(i.counts().routers_full, 1u);
  EXPECT_EQ(i.next_hop(other_global, 0), v6("fe80::1"));
  EXPECT_EQ(i.next_deadline(), 30 * s);
  i.on_router_advertisement(v6("fe80::1"), 60, 10 * s);  // refreshed
  (void)i.expire(40 * s);
  EXPECT_EQ(i.next_hop(other_global, 40 * s), v6("fe80::1"));
  (void)i.expire(70 * s);
  EXPECT_FALSE(i.next_hop(other_global, 70 * s).has_value());
  EXPECT_EQ(i.counts().routers_expired, 1u);
  i.on_router_advertisement(v6("fe80::1"), 60, 70 * s);
  i.on_router_advertisement(v6("fe80::1"), 0, 71 * s);  // lifetime 0: no longer a default router
  EXPECT_EQ(i.routers(), 0u);
  i.on_router_advertisement(v6("fe80::1"), 60, 72 * s);
  i.router_gone(v6("fe80::1"));  // RFC 4861 7.2.5: its NA cleared IsRouter
  EXPECT_EQ(i.routers(), 0u);
}

// RFC 4861 8.3: a Redirect from a destination's first hop sends it to a
// better router, or to the destination itself on the link; one from any
// other node changes nothing (8.1).
TEST(ipv6_interface, ARedirectFromTheFirstHopChangesTheDestinationsNextHop) {
  ipv6_interface_config c = two_addresses(0);
  c.gateway = v6("fe80::1");
  ipv6_interface i(c);
  i.start(0);
  const ipv6_bytes better = v6("fe80::2");
  EXPECT_FALSE(i.on_redirect(v6("fe80::7"), other_global, better, 0)) << "not the first hop";
  EXPECT_EQ(i.next_hop(other_global, 0), v6("fe80::1"));
  EXPECT_EQ(i.counts().redirects_refused, 1u);
  EXPECT_TRUE(i.on_redirect(v6("fe80::1"), other_global, better, 0));
  EXPECT_EQ(i.next_hop(other_global, 1 * s), better);
  EXPECT_EQ(i.next_hop(v6("2001:db8:1::10"), 1 * s), v6("fe80::1")) << "another destination";
  // Now only the better router may redirect it again: here, onto the link.
  EXPECT_FALSE(i.on_redirect(v6("fe80::1"), other_global, other_global, 2 * s));
  EXPECT_TRUE(i.on_redirect(better, other_global, other_global, 2 * s));
  EXPECT_EQ(i.next_hop(other_global, 3 * s), other_global);
  EXPECT_EQ(i.counts().redirects_taken, 2u);
  // It holds for redirect_lifetime_ns, then the gateway serves again.
  EXPECT_EQ(i.next_hop(other_global, 2 * s + c.redirect_lifetime_ns - 1), other_global);
  EXPECT_EQ(i.next_hop(other_global, 2 * s + c.redirect_lifetime_ns), v6("fe80::1"));
  (void)i.expire(2 * s + c.redirect_lifetime_ns);
  EXPECT_EQ(i.redirects(), 0u);
}

// RFC 4861 6.3.5: a deleted router takes the redirects to it along; and
// the redirects held are bounded, the one nearest its end making room.
TEST(ipv6_interface, RedirectsEndWithTheirRouterAndAreBounded) {
  ipv6_interface_config c = two_addresses(0);
  c.max_redirects = 2;
  ipv6_interface i(c);
  i.start(0);
  const ipv6_bytes router = v6("fe80::1"), better = v6("fe80::2");
  i.on_router_advertisement(router, 1800, 0);
  i.on_router_advertisement(better, 1800, 0);
  const ipv6_bytes d1 = v6("2001:db8:1::1"), d2 = v6("2001:db8:1::2"), d3 = v6("2001:db8:1::3");
  ASSERT_TRUE(i.on_redirect(router, d1, better, 1 * s));
  ASSERT_TRUE(i.on_redirect(router, d2, better, 2 * s));
  ASSERT_TRUE(i.on_redirect(router, d3, d3, 3 * s));
  EXPECT_EQ(i.redirects(), 2u);
  EXPECT_EQ(i.next_hop(d1, 4 * s), router) << "the oldest made room";
  EXPECT_EQ(i.next_hop(d3, 4 * s), d3);
  i.router_gone(better);  // its NA cleared IsRouter (7.2.5)
  EXPECT_EQ(i.next_hop(d2, 5 * s), router);
  EXPECT_EQ(i.next_hop(d3, 5 * s), d3) << "not through that router";
  ASSERT_TRUE(i.on_redirect(router, d2, better, 6 * s));
  i.on_router_advertisement(better, 0, 7 * s);  // lifetime 0: no longer a default router
  EXPECT_EQ(i.next_hop(d2, 7 * s), router);
}

TEST(ipv6_interface, RouterAdvertisementsAreIgnoredWhenTurnedOff) {
  ipv6_interface_config c = two_addresses(0);
  c.accept_router_advertisements = false;
  ipv6_interface i(c);
  i.on_router_advertisement(v6("fe80::1"), 30, 0);
  EXPECT_EQ(i.routers(), 0u);
}

TEST(ipv6_interface, TheSourceHasTheDestinationsScopeAndTheLongestCommonPrefix) {
  ipv6_interface_config c = two_addresses(0);
  c.addresses.push_back({v6("2001:db8:1::2"), 64});
  ipv6_interface i(c);
  i.start(0);
  EXPECT_EQ(i.source_for(v6("fe80::1")), link_local);         // RFC 6724 rule 2: scope
  EXPECT_EQ(i.source_for(all_nodes), link_local);
  EXPECT_EQ(i.source_for(v6("fd77::99")), global);             // rule 8: longest prefix
  EXPECT_EQ(i.source_for(other_global), v6("2001:db8:1::2"));
  // fec0::1 shares more bits with fe80:: than with fd77::, but is global.
  EXPECT_EQ(i.source_for(v6("fec0::1")), global);
  ipv6_interface only_link_local({.addresses = {{link_local, 64}}, .dad_transmits = 0});
  only_link_local.start(0);
  EXPECT_EQ(only_link_local.source_for(other_global), link_local);
}

}  // namespace
}  // namespace affine::stack
