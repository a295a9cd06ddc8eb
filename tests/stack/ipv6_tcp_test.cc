// TCP over IPv6 on the stack over the in-process wire: the path MTU from
// Packet Too Big (RFC 8201), flow labels (RFC 6437), a link-local peer.
// Teardown checks that every mbuf came back.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "tests/stack/ipv6_peer.hh"

namespace affine::stack {
namespace {

using namespace testing;

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

// The IPv6 flow label of a frame the stack sent.
std::uint32_t label_of(const frame& f) { return ipv6_view::parse(std::span(f).subspan(14))->flow_label(); }

// RFC 6437 3: each flow has a label of its own, not 0, the same on all its
// packets: a connection's data carries its SYN-ACK's label, and another
// flow's differs (two random 20-bit labels collide once in a million).
TEST_F(ipv6_input, EachTcpFlowKeepsOneFlowLabel) {
  with_v6([&](stack& st) {
    (void)introduce_peer();
    auto l = st.backend().listen({.local = {net::any_address_v6, 7002}, .v6_only = true});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    net::tcp_listener listener(std::move(*l));
    const auto syn_from = [&](std::uint16_t port) -> std::optional<frame> {
      tcp_segment syn{.src_port = port, .dst_port = 7002, .control = tcp_control::syn, .seq = seq32(1000)};
      syn.window = 65535;
      send(tcp6_frame(syn));
      for (frame& f : drain())
        if (tcp6_of(f)) return std::move(f);
      return std::nullopt;
    };
    const auto synack = syn_from(40001);
    ASSERT_TRUE(synack.has_value());
    const std::uint32_t label = label_of(*synack);
    EXPECT_NE(label, 0u);
    tcp_segment ack{.src_port = 40001, .dst_port = 7002, .seq = seq32(1001)};
    ack.ack = tcp6_of(*synack)->seq() + 1;
    ack.window = 65535;
    send(tcp6_frame(ack));
    auto conn = listener.accept(now_ns() + 1'000'000'000);
    ASSERT_TRUE(conn.has_value());
    const std::vector<std::byte> data(100, std::byte{'x'});
    ASSERT_TRUE(conn->write(data, now_ns() + 1'000'000'000).has_value());
    // The data, and its retransmission when a loaded machine stretches the
    // drain past the loss probe's timer (seen in CI: two segments): each
    // carries the label.
    std::size_t segments = 0;
    for (const frame& f : drain())
      if (auto t = tcp6_of(f); t && !t->payload().empty()) {
        EXPECT_EQ(label_of(f), label) << "the flow's data";
        ++segments;
      }
    EXPECT_GE(segments, 1u);
    const auto other = syn_from(40002);
    ASSERT_TRUE(other.has_value());
    EXPECT_NE(label_of(*other), label) << "another flow";
    EXPECT_NE(label_of(*other), 0u);
    conn->abort();
    listener.close();
    (void)drain();
  });
}

// RFC 6724 5 (rule 2) and RFC 4861 7.2: a connection to a link-local
// peer goes from the stack's own link-local address, to the peer's
// link-layer address as Neighbor Discovery finds it; the zone (scope id)
// is the port's one link, whatever its number.
TEST_F(ipv6_input, AConnectionToALinkLocalPeerGoesFromTheLinkLocalAddress) {
  with_stack([&](stack& st) {
    (void)drain();
    const ipv6_bytes peer_link = v6("fe80::1");
    constexpr mac_address peer_link_mac{2, 0, 0, 0, 0, 0x44};
    std::optional<net::tcp_stream> connected;
    auto f = spawn([&] {
      auto c = st.backend().connect({net::ipv6_address{peer_link, 7}, 7003}, now_ns() + 2'000'000'000ull, {});
      if (c) connected.emplace(std::move(*c));
    });
    ASSERT_TRUE(f.has_value());
    // The stack asks for the peer first (RFC 4861 7.2.2), from its link-local address.
    std::optional<ipv6_bytes> ours_link;
    for (const auto& m : icmpv6_of(drain())) {
      const auto v = icmpv6_view::parse(m.bytes, m.ip.src, m.ip.dst);
      if (!v || v->type() != icmpv6_type::neighbor_solicitation) continue;
      const auto ns = parse_neighbor_solicitation(*v, m.ip);
      if (ns && ns->target == peer_link) ours_link = m.ip.src;
    }
    ASSERT_TRUE(ours_link.has_value()) << "no solicitation for the peer";
    EXPECT_TRUE(is_link_local(*ours_link));
    std::vector<std::byte> na(32);
    (void)emit_neighbor_advertisement({.solicited = true, .override = true, .target = peer_link,
                                       .target_link_layer = peer_link_mac},
                                      peer_link, *ours_link, na);
    frame answer = ipv6_frame(next_header::icmpv6, na, *ours_link, ndp_hop_limit);
    std::memcpy(answer.data() + 14 + 8, peer_link.data(), 16);
    send(answer);
    std::optional<std::pair<std::uint16_t, seq32>> syn;  // its port and sequence number: the frame goes
    for (const frame& out : drain())
      if (auto t = tcp6_of(out); t && t->segment().control == tcp_control::syn) {
        syn = {t->segment().src_port, t->seq()};
        EXPECT_EQ(ethernet_view::parse(out)->dst(), peer_link_mac);
        const auto ip = ipv6_view::parse(std::span(out).subspan(14));
        EXPECT_EQ(ip->src(), *ours_link);
        EXPECT_EQ(ip->dst(), peer_link);
      }
    ASSERT_TRUE(syn.has_value()) << "no SYN after the advertisement";
    tcp_segment synack{.src_port = 7003, .dst_port = syn->first, .control = tcp_control::syn, .seq = seq32(5000)};
    synack.ack = syn->second + 1;
    synack.window = 65535;
    std::vector<std::byte> l4(60);
    const auto n = emit_tcp(synack, ipv6_pseudo(peer_link, *ours_link, next_header::tcp), l4, checksum_mode::software);
    frame reply = ipv6_frame(next_header::tcp, std::span(l4).first(*n), *ours_link);
    std::memcpy(reply.data() + 14 + 8, peer_link.data(), 16);
    send(reply);
    (void)drain();
    (void)f->join();
    ASSERT_TRUE(connected.has_value()) << "the connection did not open";
    EXPECT_EQ(connected->remote().addr.v6().bytes, peer_link);
    connected->abort();
    (void)drain();
  }, [](stack_config& sc) {
    sc.ipv6 = {{ours, 64}};
    sc.link_local = stack_config::link_local_mode::eui64;  // RFC 4291 2.5.1: every interface has one
    sc.dad_transmits = 0;
  });
}

}  // namespace
}  // namespace affine::stack
