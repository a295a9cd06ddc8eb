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

#include "affine/address.hh"
#include "stack/stack.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/ndp.hh"
#include "stack/wire/tcp.hh"
#include "tests/stack/tcp_peer.hh"

namespace affine::stack {
namespace {

using testing::frame, testing::peer_mac, testing::stack_mac;

ipv6_bytes v6(std::string_view text) { return net::ipv6_address::parse(text).value().bytes; }

const ipv6_bytes ours = v6("fd77::2");
const ipv6_bytes peer = v6("fd77::1");

// An Ethernet frame to `dst_mac` carrying IPv6 from the peer: `l4` after
// the 40-byte header, Next Header `next`.
frame ipv6_frame(std::uint8_t next, std::span<const std::byte> l4, const ipv6_bytes& dst = ours,
                 std::uint8_t hop_limit = 64, const mac_address& dst_mac = stack_mac) {
  frame f(14 + 40 + l4.size());
  (void)emit_ethernet({.dst = dst_mac, .src = peer_mac, .type = ether_type::ipv6}, f);
  const ipv6_header h{.src = peer, .dst = dst, .next = next, .hop_limit = hop_limit,
                      .payload_length = std::uint16_t(l4.size())};
  (void)emit_ipv6(h, std::span(f).subspan(14));
  std::memcpy(f.data() + 54, l4.data(), l4.size());
  return f;
}

std::vector<std::byte> echo_request(const ipv6_bytes& dst = ours) {
  std::vector<std::byte> m(8 + 4);
  const std::array<std::byte, 4> data{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 9, .data = data}, peer, dst, m);
  return m;
}

std::vector<std::byte> solicitation(const ipv6_bytes& target, const ipv6_bytes& dst) {
  std::vector<std::byte> m(32);
  (void)emit_neighbor_solicitation(target, peer_mac, peer, dst, m);
  return m;
}

// The IPv6 frames among what the stack sent, as ICMPv6 messages.
struct sent_icmpv6 {
  ipv6_header ip;
  std::vector<std::byte> bytes;
};
std::vector<sent_icmpv6> icmpv6_of(const std::vector<frame>& out) {
  std::vector<sent_icmpv6> got;
  for (const frame& f : out) {
    auto eth = ethernet_view::parse(f);
    if (!eth || eth->type() != ether_type::ipv6) continue;
    auto ip = ipv6_view::parse(eth->payload());
    if (!ip || ip->next() != next_header::icmpv6) continue;
    got.push_back({ip->header(), {ip->payload().begin(), ip->payload().end()}});
  }
  return got;
}

class ipv6_input : public testing::tcp_peer {
 protected:
  ipv6_input() : tcp_peer("ipv6_input_") {}

  void with_v6(const std::function<void(stack&)>& body) {
    with_stack(
        [&](stack& st) {
          (void)drain();  // the MLD report of start-up
          body(st);
        },
        [](stack_config& sc) {
          sc.ipv6 = {{ours, 64}};
          sc.dad_transmits = 0;  // preferred at once: DAD has its own tests
        });
  }

  // The peer's solicitation for our address, which teaches the stack the
  // peer's link-layer address (RFC 4861 7.2.3) before anything it must
  // answer; what the stack sent back.
  std::vector<frame> introduce_peer() {
    send(ipv6_frame(next_header::icmpv6, solicitation(ours, solicited_node(ours)), solicited_node(ours), 255,
                    multicast_mac(solicited_node(ours))));
    return drain();
  }
};

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

// Bytes [offset, offset + len) of `whole` (an ICMPv6 message) behind a
// Fragment header (RFC 8200 4.5) with identification `id`.
frame fragment_of(std::span<const std::byte> whole, std::size_t offset, std::size_t len, bool more,
                  std::uint32_t id = 42) {
  std::vector<std::byte> l4(8);
  l4[0] = std::byte(next_header::icmpv6);
  l4[2] = std::byte(offset >> 8);
  l4[3] = std::byte((offset & 0xf8) | (more ? 1 : 0));
  for (int i = 0; i < 4; ++i) l4[4 + i] = std::byte(id >> (24 - 8 * i));
  l4.insert(l4.end(), whole.begin() + std::ptrdiff_t(offset), whole.begin() + std::ptrdiff_t(offset + len));
  return ipv6_frame(next_header::fragment, l4);
}

// RFC 8200 4.5: fragments are reassembled (in any order) and the whole
// packet goes on: an echo request in two fragments is answered once.
TEST_F(ipv6_input, AFragmentedEchoRequestIsReassembledAndAnswered) {
  with_v6([&](stack& st) {
    (void)introduce_peer();
    std::vector<std::byte> echo(8 + 24);
    std::vector<std::byte> data(24);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i);
    (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 10, .data = data}, peer, ours, echo);
    send(fragment_of(echo, 16, 16, false));
    EXPECT_TRUE(drain().empty()) << "answered half a packet";
    send(fragment_of(echo, 0, 16, true));
    const auto reply = icmpv6_of(drain());
    ASSERT_EQ(reply.size(), 1u);
    const auto r = icmpv6_view::parse(reply[0].bytes, ours, peer);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->type(), icmpv6_type::echo_reply);
    EXPECT_EQ(r->seq(), 10);
    EXPECT_TRUE(std::ranges::equal(r->data(), data));
    EXPECT_EQ(st.counters(0).get(drop::fragment), 0u);
  });
}

// RFC 5722: fragments that overlap drop the whole packet, silently; what
// comes of it later is a new packet that never completes.
TEST_F(ipv6_input, OverlappingFragmentsDropThePacketUnanswered) {
  with_v6([&](stack& st) {
    (void)introduce_peer();
    std::vector<std::byte> echo(8 + 24);
    const std::vector<std::byte> data(24, std::byte{0x5a});
    (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 11, .data = data}, peer, ours, echo);
    send(fragment_of(echo, 0, 16, true, 43));
    send(fragment_of(echo, 8, 24, false, 43));  // [8, 16) again
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(st.counters(0).get(drop::fragment), 1u);
    send(fragment_of(echo, 16, 16, false, 43));
    EXPECT_TRUE(drain().empty()) << "the dropped packet completed after all";
  });
}

// RFC 8200 4.5: a packet not whole within the reassembly time is dropped
// and counted; where its first fragment came, that fragment's source gets
// Time Exceeded, code 1 (fragment reassembly time exceeded), quoting the
// fragment as it came; where only a later one came, nothing.
TEST_F(ipv6_input, AnExpiredReassemblyIsAnsweredWithTimeExceededWhereItsFirstFragmentCame) {
  with_stack(
      [&](stack& st) {
        (void)drain();
        (void)introduce_peer();
        std::vector<std::byte> echo(8 + 24);
        const std::vector<std::byte> data(24, std::byte{0x33});
        (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 12, .data = data}, peer, ours, echo);
        const frame first = fragment_of(echo, 0, 16, true, 44);
        send(first);
        send(fragment_of(echo, 16, 16, false, 45));  // another packet's last fragment
        std::vector<frame> out;
        for (int i = 0; i < 100 && st.counters(0).get(drop::fragment_timeout) < 2; ++i)
          for (frame& f : drain()) out.push_back(std::move(f));
        for (frame& f : drain()) out.push_back(std::move(f));
        EXPECT_EQ(st.counters(0).get(drop::fragment_timeout), 2u);
        const auto got = icmpv6_of(out);
        ASSERT_EQ(got.size(), 1u) << "one Time Exceeded, for the packet whose first fragment came";
        EXPECT_EQ(got[0].ip.src, ours);
        EXPECT_EQ(got[0].ip.dst, peer);
        const auto r = icmpv6_view::parse(got[0].bytes, ours, peer);
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->type(), icmpv6_type::time_exceeded);
        EXPECT_EQ(r->code(), 1);
        EXPECT_TRUE(std::ranges::equal(r->data(), std::span(first).subspan(14)));
      },
      [](stack_config& sc) {
        sc.ipv6 = {{ours, 64}};
        sc.dad_transmits = 0;
        sc.reassembly.ipv6_timeout_ns = 30'000'000;
      });
}

// The peer's TCP segment over IPv6, and the stack's out of a frame it sent.
frame tcp6_frame(const tcp_segment& seg) {
  std::vector<std::byte> l4(60 + seg.payload.size());
  const auto n = emit_tcp(seg, ipv6_pseudo(peer, ours, next_header::tcp), l4, checksum_mode::software);
  return ipv6_frame(next_header::tcp, std::span(l4).first(*n));
}
std::optional<tcp_view> tcp6_of(const frame& f) {
  auto eth = ethernet_view::parse(f);
  if (!eth || eth->type() != ether_type::ipv6) return std::nullopt;
  auto ip = ipv6_view::parse(eth->payload());
  if (!ip || ip->next() != next_header::tcp) return std::nullopt;
  auto t = tcp_view::parse(ip->payload(), ipv6_pseudo(ip->src(), ip->dst(), next_header::tcp));
  return t ? std::optional(*t) : std::nullopt;
}

// RFC 8201: a Packet Too Big quoting a segment in flight lowers the path
// MTU to the peer, and what is in flight goes again at once in segments
// that fit (1280 less the IPv6 and TCP headers); the MSS of an IPv6
// connection is the MTU less 60.
TEST_F(ipv6_input, PacketTooBigResegmentsWhatIsInFlight) {
  with_v6([&](stack& st) {
    (void)introduce_peer();
    auto l = st.backend().listen({.local = {net::any_address_v6, 7001}, .v6_only = true});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    net::tcp_listener listener(std::move(*l));
    tcp_segment syn{.src_port = 40000, .dst_port = 7001, .control = tcp_control::syn, .seq = seq32(1000)};
    syn.window = 65535;
    syn.options.mss = 1440;
    send(tcp6_frame(syn));
    const auto synack_frames = drain();
    ASSERT_EQ(synack_frames.size(), 1u);
    const auto synack = tcp6_of(synack_frames[0]);
    ASSERT_TRUE(synack.has_value());
    EXPECT_EQ(synack->options().mss, std::optional<std::uint16_t>(1500 - 60));
    tcp_segment ack{.src_port = 40000, .dst_port = 7001, .seq = seq32(1001)};
    ack.ack = synack->seq() + 1;
    ack.window = 65535;
    send(tcp6_frame(ack));
    (void)drain();
    auto conn = listener.accept(now_ns() + 1'000'000'000);
    ASSERT_TRUE(conn.has_value());
    const std::vector<std::byte> data(4000, std::byte{'x'});
    ASSERT_TRUE(conn->write(data, now_ns() + 1'000'000'000).has_value());
    std::optional<frame> first;
    std::uint32_t first_seq = 0;
    for (const frame& f : drain())
      if (auto t = tcp6_of(f); t && !t->payload().empty() && !first) {
        first = f;
        first_seq = t->seq().raw();
        EXPECT_EQ(t->payload().size(), 1440u);
      }
    ASSERT_TRUE(first.has_value());
    // A router on a 1280-byte hop quotes it (as much as fits, RFC 4443 2.4(c)).
    const auto quoted = std::span<const std::byte>(*first).subspan(14, std::min<std::size_t>(first->size() - 14, 1232));
    std::vector<std::byte> ptb(8 + quoted.size());
    const ipv6_bytes router = v6("fd77::99");
    (void)emit_icmpv6({.type = icmpv6_type::packet_too_big, .mtu = 1280, .data = quoted}, router, ours, ptb);
    frame f = ipv6_frame(next_header::icmpv6, ptb);
    std::memcpy(f.data() + 14 + 8, router.data(), 16);  // from the router, not the peer
    send(f);
    std::size_t segments = 0;
    std::optional<std::uint32_t> again;
    for (const frame& out : drain())
      if (auto t = tcp6_of(out); t && !t->payload().empty()) {
        if (!again) again = t->seq().raw();
        EXPECT_LE(t->payload().size(), 1280u - 60);
        ++segments;
      }
    ASSERT_TRUE(again.has_value()) << "nothing sent again";
    EXPECT_EQ(*again, first_seq);  // from SND.UNA
    EXPECT_GE(segments, 3u);
    EXPECT_EQ(st.counters(0).icmp_errors_taken.load(), 1u);
    conn->abort();
    listener.close();
    (void)drain();
  });
}

}  // namespace
}  // namespace affine::stack
