// IPv6 on the stack's receive path (issue 21) over the in-process wire:
// what a host must answer (echo, Neighbor Solicitation, an unknown Next
// Header) is answered, and malformed IPv6 and Neighbor Discovery is
// dropped, counted under its reason, and never answered (RFC 4861 7.1.1:
// silently discarded). Teardown checks that every mbuf came back.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "tests/stack/ipv6_peer.hh"

namespace affine::stack {
namespace {

using namespace testing;

TEST_F(ipv6_input, AnEchoRequestIsAnsweredFromTheAddressItWasSentTo) {
  with_v6([&](stack& st) {
    // Our reply needs the peer's link-layer address: the solicitation
    // that teaches it comes first (RFC 4861 7.2.3).
    const auto na = icmpv6_of(introduce_peer());
    ASSERT_EQ(na.size(), 1u);
    const auto v = icmpv6_view::parse(na[0].bytes, na[0].ip.src, na[0].ip.dst);
    ASSERT_TRUE(v.has_value());
    ASSERT_EQ(v->type(), icmpv6_type::neighbor_advertisement);
    EXPECT_EQ(na[0].ip.hop_limit, 255);
    const auto adv = parse_neighbor_advertisement(*v, na[0].ip);
    ASSERT_TRUE(adv.has_value());
    EXPECT_TRUE(adv->solicited && adv->override && !adv->router);
    EXPECT_EQ(adv->target, ours);
    EXPECT_EQ(adv->target_link_layer, stack_mac);

    send(ipv6_frame(next_header::icmpv6, echo_request()));
    const auto reply = icmpv6_of(drain());
    ASSERT_EQ(reply.size(), 1u);
    EXPECT_EQ(reply[0].ip.src, ours);
    EXPECT_EQ(reply[0].ip.dst, peer);
    const auto r = icmpv6_view::parse(reply[0].bytes, ours, peer);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->type(), icmpv6_type::echo_reply);
    EXPECT_EQ(r->id(), 7);
    EXPECT_EQ(r->seq(), 9);
    EXPECT_EQ(r->data().size(), 4u);
    EXPECT_EQ(st.counters(0).total_drops(), 0u);
  });
}

// RFC 8200 4: a Next Header this host does not know is answered with a
// Parameter Problem, code 1, pointing at the field that named it.
TEST_F(ipv6_input, AnUnknownNextHeaderIsAnsweredWithParameterProblem) {
  with_v6([&](stack& st) {
    (void)st;
    (void)introduce_peer();
    const std::array<std::byte, 8> junk{};
    send(ipv6_frame(253, junk));
    const auto out = icmpv6_of(drain());
    ASSERT_EQ(out.size(), 1u);
    const auto v = icmpv6_view::parse(out[0].bytes, out[0].ip.src, out[0].ip.dst);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->type(), icmpv6_type::parameter_problem);
    EXPECT_EQ(v->code(), 1);
    EXPECT_EQ(v->pointer(), 6u);
  });
}

// Each is dropped, counted under its reason, and answered with nothing.
TEST_F(ipv6_input, MalformedIpv6AndNeighborDiscoveryAreDroppedCountedAndUnanswered) {
  with_v6([&](stack& st) {
    const auto ns = solicitation(ours, solicited_node(ours));
    const ipv6_bytes group = solicited_node(ours);
    const mac_address group_mac = multicast_mac(group);
    struct one_case {
      const char* what;
      frame f;
      layer l;
      parse_error reason;
    };
    std::vector<one_case> cases;
    {
      frame f = ipv6_frame(next_header::icmpv6, echo_request());
      f.resize(14 + 30);
      cases.push_back({"a truncated header", f, layer::ipv6, parse_error::truncated});
    }
    {
      frame f = ipv6_frame(next_header::icmpv6, echo_request());
      f[14 + 5] = std::byte(200);  // payload length past the frame
      cases.push_back({"a payload length past the frame", f, layer::ipv6, parse_error::bad_payload_length});
    }
    {
      frame f = ipv6_frame(next_header::icmpv6, echo_request());
      f[14] = std::byte(0x40);  // version 4 in an IPv6 frame
      cases.push_back({"version 4", f, layer::ipv6, parse_error::bad_version});
    }
    {
      // Twelve Destination Options headers (each 8 bytes of Pad1/PadN)
      // before the upper layer: past the walk's bound of 8.
      std::vector<std::byte> chain;
      for (int i = 0; i < 12; ++i) {
        const std::uint8_t next = i + 1 < 12 ? next_header::destination : next_header::none;
        const std::array<std::byte, 8> h{std::byte(next), std::byte(0), std::byte(1), std::byte(4)};
        chain.insert(chain.end(), h.begin(), h.end());
      }
      cases.push_back({"an extension chain past the bound", ipv6_frame(next_header::destination, chain), layer::ipv6,
                       parse_error::bad_extension});
    }
    {
      frame f = ipv6_frame(next_header::icmpv6, echo_request());
      f[14 + 8] = std::byte(0xff);  // the source: ff..., a multicast address
      cases.push_back({"a multicast source", f, layer::ipv6, parse_error::bad_source});
    }
    {
      frame f = ipv6_frame(next_header::icmpv6, echo_request());
      // The source: ::ffff:10.0.0.9, IPv4-mapped (RFC 4291 2.5.5.2).
      const std::uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 9};
      for (int i = 0; i < 16; ++i) f[14 + 8 + i] = std::byte(mapped[i]);
      cases.push_back({"an IPv4-mapped source", f, layer::ipv6, parse_error::bad_source});
    }
    cases.push_back({"NS with hop limit 254", ipv6_frame(next_header::icmpv6, ns, group, 254, group_mac), layer::ndp,
                     parse_error::bad_hop_limit});
    {
      auto bad = ns;
      bad[25] = std::byte(0);  // the source link-layer option's length: 0
      set_icmpv6_checksum(bad, peer, group);
      cases.push_back({"NS with an option of length 0", ipv6_frame(next_header::icmpv6, bad, group, 255, group_mac),
                       layer::ndp, parse_error::bad_option});
    }
    {
      auto bad = ns;
      bad[1] = std::byte(1);  // code 1
      set_icmpv6_checksum(bad, peer, group);
      cases.push_back({"NS with code 1", ipv6_frame(next_header::icmpv6, bad, group, 255, group_mac), layer::ndp,
                       parse_error::bad_code});
    }
    {
      auto bad = echo_request();
      bad[2] = std::byte(std::uint8_t(bad[2]) ^ 0xff);
      cases.push_back({"an ICMPv6 checksum that fails", ipv6_frame(next_header::icmpv6, bad), layer::icmpv6,
                       parse_error::bad_checksum});
    }
    for (const one_case& c : cases) {
      const std::uint64_t before = st.counters(0).get(c.l, c.reason);
      send(c.f);
      EXPECT_TRUE(drain().empty()) << c.what << ": answered";
      EXPECT_EQ(st.counters(0).get(c.l, c.reason), before + 1) << c.what << ": not counted as " << to_string(c.reason);
    }
  });
}

}  // namespace
}  // namespace affine::stack
