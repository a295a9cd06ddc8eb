// Redirects on the stack over the in-process wire (RFC 4861 8): a Redirect
// from the first hop for a destination sends its packets to a better
// router from then on, at the link-layer address the Redirect gives, until
// that router says it is one no more; one from any other node changes
// nothing. Teardown checks that every mbuf came back.

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "tests/stack/ipv6_peer.hh"
#include "tests/stack/wire/ipv6_packets.hh"

namespace affine::stack {
namespace {

using namespace testing;

const ipv6_bytes router = v6("fe80::1");
const ipv6_bytes better = v6("fe80::2");
const ipv6_bytes far = v6("2001:db8:5::5");  // off the link: through a router
constexpr mac_address router_mac{2, 0, 0, 0, 0, 0x11};
constexpr mac_address better_mac{2, 0, 0, 0, 0, 0x22};

// `l4` from `src` to the stack, as ipv6_frame writes it from the peer.
frame from(const ipv6_bytes& src, std::uint8_t next, std::span<const std::byte> l4, std::uint8_t hop_limit = 64,
           const ipv6_bytes& dst = ours, const mac_address& dst_mac = stack_mac) {
  frame f = ipv6_frame(next, l4, dst, hop_limit, dst_mac);
  std::memcpy(f.data() + 14 + 8, src.data(), 16);
  return f;
}

// A Redirect from `src` (hop limit 255, RFC 4861 8.1) sending `destination`
// to `target`, with its link-layer address `mac`.
frame redirect(const ipv6_bytes& src, const ipv6_bytes& destination, const ipv6_bytes& target,
               const mac_address& mac) {
  test::message_builder m;
  m.icmpv6(icmpv6_type::redirect).u32(0).address(target).address(destination);
  m.u8(ndp_option::target_link_layer).u8(1).mac(mac);
  return from(src, next_header::icmpv6, m.finish(src, ours), ndp_hop_limit);
}

class ipv6_redirect : public ipv6_input {
 protected:
  // An echo request from `far`; the link-layer address its reply went to.
  std::optional<mac_address> reply_goes_to() {
    std::vector<std::byte> echo(8);
    (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 1}, far, ours, echo);
    send(from(far, next_header::icmpv6, echo));
    std::optional<mac_address> to;
    for (const frame& f : drain()) {
      const auto eth = ethernet_view::parse(f);
      if (!eth || eth->type() != ether_type::ipv6) continue;
      const auto ip = ipv6_view::parse(eth->payload());
      if (ip && ip->dst() == far && ip->next() == next_header::icmpv6) to = eth->dst();
    }
    return to;
  }
};

TEST_F(ipv6_redirect, ARedirectFromTheFirstHopSendsTheDestinationToABetterRouter) {
  with_stack(
      [&](stack& st) {
        (void)drain();
        // The gateway's link-layer address, from its solicitation (RFC 4861 7.2.3).
        std::vector<std::byte> ns(32);
        (void)emit_neighbor_solicitation(ours, router_mac, router, solicited_node(ours), ns);
        send(from(router, next_header::icmpv6, ns, ndp_hop_limit, solicited_node(ours),
                  multicast_mac(solicited_node(ours))));
        (void)drain();
        EXPECT_EQ(reply_goes_to(), router_mac);

        // From a node that is not the first hop for `far`: silently discarded (8.1).
        send(redirect(v6("fe80::7"), far, v6("fe80::3"), mac_address{2, 0, 0, 0, 0, 0x33}));
        EXPECT_TRUE(drain().empty());
        EXPECT_EQ(st.counters(0).get(layer::ndp, parse_error::bad_source), 1u);
        EXPECT_EQ(reply_goes_to(), router_mac);

        send(redirect(router, far, better, better_mac));
        EXPECT_TRUE(drain().empty());
        EXPECT_EQ(st.counters(0).ipv6_redirects.load(), 1u);
        EXPECT_EQ(reply_goes_to(), better_mac) << "to the better router, at the address the Redirect gave";
        EXPECT_EQ(st.counters(0).get(layer::ndp, parse_error::bad_source), 1u);

        // The Redirect made its target a router (IsRouter, 8.3); its
        // advertisement without the R flag says it is one no more (7.2.5),
        // and the destinations sent to it find their first hop again (6.3.5).
        std::vector<std::byte> na(32);
        const neighbor_advertisement no_router{.override = true, .target = better, .target_link_layer = better_mac};
        (void)emit_neighbor_advertisement(no_router, better, ours, na);
        send(from(better, next_header::icmpv6, na, ndp_hop_limit));
        EXPECT_EQ(reply_goes_to(), router_mac);
      },
      [](stack_config& sc) {
        sc.ipv6 = {{ours, 64}};
        sc.dad_transmits = 0;
        sc.gateway6 = router;
      });
}

}  // namespace
}  // namespace affine::stack
