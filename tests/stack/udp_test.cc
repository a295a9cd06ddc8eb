// UDP sockets on the userspace stack (issue 5, "UDP sockets: bind, send_to,
// recv_from"), over the in-process wire: the test plays the peer with raw
// frames (what the stack sends is parsed and checked field by field), and
// two stacks talk to each other. Also stream_options::linger on the stack.
// Teardown checks that every mbuf came back to its pool and that no socket,
// connection or ring buffer is left.

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "affine/net.hh"
#include "affine/runtime.hh"
#include "stack/stack.hh"
#include "stack/wire/arp.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmp.hh"
#include "stack/wire/udp.hh"
#include "tests/stack/wire_peer.hh"

namespace affine::stack {
namespace {

using namespace std::chrono_literals;
using testing::frame, testing::peer_mac, testing::stack_mac;

constexpr std::uint32_t stack_ip = 0x0a640001;  // 10.100.0.1
constexpr std::uint32_t peer_ip = 0x0a640002;   // 10.100.0.2
constexpr std::uint32_t subnet_broadcast = 0x0a6400ff;
constexpr std::uint16_t port = 5353;
constexpr std::uint16_t peer_port = 40000;
constexpr std::size_t largest_payload = 1500 - 28;  // the wire's MTU less the IPv4 and UDP headers
constexpr std::uint64_t ms = 1'000'000;

std::uint64_t in_5s() { return now_ns() + 5'000 * ms; }
std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s)); }
std::string text_of(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

frame ipv4_frame(const ipv4_header& ih, std::span<const std::byte> payload, const mac_address& dst_mac = stack_mac) {
  frame f(14 + 20 + payload.size());
  (void)emit_ethernet({.dst = dst_mac, .src = peer_mac, .type = ether_type::ipv4}, f);
  (void)emit_ipv4(ih, std::span(f).subspan(14), checksum_mode::software);
  std::memcpy(f.data() + 34, payload.data(), payload.size());
  return f;
}

// A datagram from the peer; its checksum computed unless `zero_checksum`
// (RFC 768: the sender computed none).
frame udp_frame(std::uint16_t dst_port, std::span<const std::byte> payload, std::uint32_t dst_ip = stack_ip,
                bool zero_checksum = false) {
  std::vector<std::byte> l4(8 + payload.size());
  (void)emit_udp({.src_port = peer_port, .dst_port = dst_port}, payload, peer_ip, dst_ip, l4, checksum_mode::software);
  if (zero_checksum) l4[6] = l4[7] = std::byte{0};
  ipv4_header ih;
  ih.src = peer_ip;
  ih.dst = dst_ip;
  ih.protocol = ip_protocol::udp;
  ih.payload_length = std::uint16_t(l4.size());
  return ipv4_frame(ih, l4, dst_ip == stack_ip ? stack_mac : broadcast_mac);
}

// A runtime of up to two cores, the test playing the peer on end b of the
// wire; wire_peer's teardown checks every mbuf, socket, connection and ring
// buffer.
class udp_wire_test : public testing::wire_peer {
 protected:
  udp_wire_test()
      : wire_peer({.pool_prefix = "udp_test_", .pool_mbufs = 2047, .max_cores = 2, .stack_ip = stack_ip,
                   .peer_ip = peer_ip, .drain_rounds = 4}) {}

  std::unique_ptr<stack> make_stack(drivers::port& p, std::uint32_t address, unsigned core) {
    stack_config sc;
    sc.address = address;
    auto st = stack::create(*rt_, p, sc, std::vector<rxq_assignment>{{0, core_id{core}}});
    EXPECT_TRUE(st.has_value()) << st.error();
    return st ? std::move(*st) : nullptr;
  }

  static std::expected<net::udp_socket, std::error_code> bind(stack& st, const net::udp_options& o) {
    auto u = st.backend().bind_udp(o);
    if (!u) return std::unexpected(u.error());
    return net::udp_socket(std::move(*u));
  }
};

// One stack on end a; the test is the peer on end b.
class udp_raw : public udp_wire_test {
 protected:
  void with_stack(const std::function<void(stack&)>& body) {
    rt_->run([&] {
      auto st = make_stack(link_->a(), stack_ip, 0);
      ASSERT_NE(st, nullptr);
      body(*st);
      (void)drain();
      st.reset();
    });
  }
};

TEST_F(udp_raw, ADatagramFromThePeerReachesTheBoundSocketWithItsSender) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::any_address, port}});
    ASSERT_TRUE(u.has_value()) << u.error().message();
    send(udp_frame(port, bytes_of("query")));
    std::array<std::byte, 64> buf;
    auto got = u->recv_from(buf, in_5s());
    ASSERT_TRUE(got.has_value()) << got.error().message();
    EXPECT_EQ(text_of(std::span(buf).first(got->size)), "query");
    EXPECT_FALSE(got->truncated);
    EXPECT_EQ(got->from, (net::endpoint{net::ipv4_address{peer_ip}, peer_port}));
    EXPECT_TRUE(drain().empty()) << "a delivered datagram was answered";
    EXPECT_EQ(st.counters(0).total_drops(), 0u);
  });
}

TEST_F(udp_raw, SendToEmitsOneDatagramWithDontFragmentAndAValidChecksum) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::ipv4_address{stack_ip}, port}});
    ASSERT_TRUE(u.has_value());
    std::vector<std::byte> payload(largest_payload);
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = std::byte(i * 7);
    ASSERT_TRUE(u->send_to({net::ipv4_address{peer_ip}, peer_port}, payload));  // waits in the ARP queue; drain() answers
    const auto out = drain();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].size(), 14u + 1500u);
    auto ip = ipv4_view::parse(std::span(out[0]).subspan(14));
    ASSERT_TRUE(ip.has_value());
    EXPECT_EQ(ip->protocol(), ip_protocol::udp);
    EXPECT_EQ(ip->src(), stack_ip);
    EXPECT_EQ(ip->dst(), peer_ip);
    EXPECT_TRUE(ip->dont_fragment());
    auto d = udp_view::parse(ip->payload(), ip->src(), ip->dst(), checksum_mode::software);
    ASSERT_TRUE(d.has_value()) << "checksum or length wrong";
    EXPECT_NE(d->checksum(), 0);
    EXPECT_EQ(d->src_port(), port);
    EXPECT_EQ(d->dst_port(), peer_port);
    EXPECT_TRUE(std::ranges::equal(d->payload(), payload));
  });
}

// A frame already waiting on the port when the stack is made (a tap's
// kernel side sends some the moment its interface is up) reaches a whole
// stack: stack::create puts its pollers on the reactors last. Here the RX
// queue's reactor is another core than the one making the stack, so it
// would poll while create() still builds its per-core state.
TEST_F(udp_raw, FramesWaitingBeforeTheStackStartsAreAnsweredOnceItIsWhole) {
  if (cores_ < 2) GTEST_SKIP() << "needs a second core for the RX queue (this machine has one)";
  rt_->run([&] {
    frame request(42);
    (void)emit_ethernet({.dst = broadcast_mac, .src = peer_mac, .type = ether_type::arp}, request);
    (void)emit_arp({arp_op::request, peer_mac, peer_ip, {}, stack_ip}, std::span(request).subspan(14));
    for (int i = 0; i < 32; ++i) send(request);
    auto st = make_stack(link_->a(), stack_ip, 1);
    ASSERT_NE(st, nullptr);
    std::size_t replies = 0;
    for (const frame& f : drain()) {
      auto eth = ethernet_view::parse(f);
      if (!eth || eth->type() != ether_type::arp) continue;
      auto r = arp_view::parse(eth->payload());
      replies += r && r->op() == arp_op::reply && r->target_ip() == peer_ip;
    }
    EXPECT_EQ(replies, 32u);
    st.reset();
  });
}

// RFC 826 "Packet Reception": a sender already in the cache has its
// hardware address updated. The stack's core keeps a copy of its last
// answer (stack::transmit) and must drop it at once: the very next datagram
// goes to the new address.
TEST_F(udp_raw, ANewAnswerForTheNextHopRedirectsTheVeryNextDatagram) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::ipv4_address{stack_ip}, port}});
    ASSERT_TRUE(u.has_value());
    auto dst_mac_of_next = [&] {
      EXPECT_TRUE(u->send_to({net::ipv4_address{peer_ip}, peer_port}, bytes_of("hello")));
      const auto out = drain();
      EXPECT_EQ(out.size(), 1u);
      return out.empty() ? mac_address{} : mac_field{0}.get(out[0]);
    };
    EXPECT_EQ(dst_mac_of_next(), peer_mac);  // resolved (drain() answers the request)
    EXPECT_EQ(dst_mac_of_next(), peer_mac);  // from the core's copy
    constexpr mac_address moved{0x02, 0, 0, 0, 0, 0x77};
    frame announce(60);  // the peer's address moved to another card: a gratuitous reply
    (void)emit_ethernet({.dst = broadcast_mac, .src = moved, .type = ether_type::arp}, announce);
    (void)emit_arp({arp_op::reply, moved, peer_ip, broadcast_mac, peer_ip}, std::span(announce).subspan(14));
    send(announce);
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(dst_mac_of_next(), moved);
    EXPECT_EQ(dst_mac_of_next(), moved);
  });
}

TEST_F(udp_raw, ADatagramLargerThanOneFrameCarriesIsMessageSizeAndNothingIsSent) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::any_address, 0}});
    ASSERT_TRUE(u.has_value());
    std::vector<std::byte> payload(largest_payload + 1);
    auto r = u->send_to({net::ipv4_address{peer_ip}, peer_port}, payload);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), std::errc::message_size);
    EXPECT_EQ(u->send_to({net::ipv4_address{peer_ip}, 0}, std::span(payload).first(1)).error(), std::errc::invalid_argument);
    EXPECT_EQ(u->send_to({net::ipv4_address{0x0b000001}, peer_port}, {}).error(), std::errc::network_unreachable);
    EXPECT_TRUE(drain().empty());
  });
}

// RFC 1122 4.1.3.1: a datagram for a port nobody bound is answered with
// ICMP destination unreachable, code 3 (port), quoting its header.
TEST_F(udp_raw, AnUnboundPortIsAnsweredWithPortUnreachable) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::any_address, port}});
    ASSERT_TRUE(u.has_value());
    send(udp_frame(port + 1, bytes_of("anyone?")));
    const auto out = drain();
    ASSERT_EQ(out.size(), 1u);
    auto ip = ipv4_view::parse(std::span(out[0]).subspan(14));
    ASSERT_TRUE(ip.has_value());
    EXPECT_EQ(ip->protocol(), ip_protocol::icmp);
    EXPECT_EQ(ip->dst(), peer_ip);
    auto icmp = icmp_view::parse(ip->payload());
    ASSERT_TRUE(icmp.has_value());
    EXPECT_EQ(icmp->type(), icmp_type::dest_unreachable);
    EXPECT_EQ(icmp->code(), 3);
    auto quote = parse_ipv4_quote(icmp->data());
    ASSERT_TRUE(quote.has_value());
    EXPECT_EQ(quote->protocol, ip_protocol::udp);
    EXPECT_EQ(quote->src, peer_ip);
    EXPECT_EQ((std::uint16_t(quote->transport[2]) << 8) | std::uint16_t(quote->transport[3]), port + 1);
    EXPECT_EQ(st.counters(0).get(drop::udp_no_socket), 1u);
  });
}

// RFC 1122 3.2.2: no ICMP error answers a broadcast; a socket bound to
// every address takes broadcasts, one bound to the unicast address does not.
TEST_F(udp_raw, BroadcastsReachASocketBoundToEveryAddressAndAreNeverAnsweredWithAnError) {
  with_stack([&](stack& st) {
    auto any = bind(st, {.local = {net::any_address, port}});
    auto unicast = bind(st, {.local = {net::ipv4_address{stack_ip}, port + 1}});
    ASSERT_TRUE(any && unicast);
    send(udp_frame(port, bytes_of("to all"), subnet_broadcast));
    send(udp_frame(port + 1, bytes_of("to all, again"), 0xffffffff));
    std::array<std::byte, 64> buf;
    auto got = any->recv_from(buf, in_5s());
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(text_of(std::span(buf).first(got->size)), "to all");
    EXPECT_TRUE(drain().empty()) << "a broadcast was answered";
    EXPECT_EQ(unicast->recv_from(buf, now_ns() + 10 * ms).error(), std::errc::timed_out);
    EXPECT_EQ(st.counters(0).get(drop::udp_no_socket), 1u);
  });
}

TEST_F(udp_raw, AFullReceiveQueueDropsAndCountsAndTheQueuedOnesComeOutInOrder) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::any_address, port}, .receive_queue = 4});
    ASSERT_TRUE(u.has_value());
    for (char c = 'a'; c < 'g'; ++c) send(udp_frame(port, bytes_of(std::string(3, c))));
    (void)drain();
    EXPECT_EQ(st.counters(0).get(drop::udp_queue_full), 2u);
    std::array<std::byte, 8> buf;
    for (char c = 'a'; c < 'e'; ++c) {
      auto got = u->recv_from(buf, in_5s());
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(text_of(std::span(buf).first(got->size)), std::string(3, c));
    }
    EXPECT_EQ(u->recv_from(buf, now_ns() + 10 * ms).error(), std::errc::timed_out) << "a dropped datagram came out";
    send(udp_frame(port, bytes_of("room again")));
    auto got = u->recv_from(buf, in_5s());
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(got->truncated);
    EXPECT_EQ(text_of(buf), "room aga");
  });
}

TEST_F(udp_raw, AZeroChecksumIsAcceptedAndABadOneIsDroppedAndCounted) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::any_address, port}});
    ASSERT_TRUE(u.has_value());
    frame bad = udp_frame(port, bytes_of("corrupt"));
    bad[34 + 6] ^= std::byte{0x5a};
    send(bad);
    send(udp_frame(port, bytes_of("no sum"), stack_ip, /*zero_checksum=*/true));
    std::array<std::byte, 16> buf;
    auto got = u->recv_from(buf, in_5s());
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(text_of(std::span(buf).first(got->size)), "no sum");
    EXPECT_EQ(st.counters(0).get(layer::udp, parse_error::bad_checksum), 1u);
  });
}

// Reassembled (RFC 791) datagrams are larger than a frame: the queue's byte
// ring takes them as long as it has room.
TEST_F(udp_raw, AReassembledDatagramLargerThanAFrameIsDelivered) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::any_address, port}});
    ASSERT_TRUE(u.has_value());
    std::vector<std::byte> payload(3000);
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = std::byte(i * 13);
    std::vector<std::byte> l4(8 + payload.size());
    (void)emit_udp({.src_port = peer_port, .dst_port = port}, payload, peer_ip, stack_ip, l4, checksum_mode::software);
    for (std::size_t off = 0; off < l4.size(); off += 1480) {
      ipv4_header ih;
      ih.src = peer_ip;
      ih.dst = stack_ip;
      ih.protocol = ip_protocol::udp;
      ih.id = 77;
      ih.fragment_offset = std::uint16_t(off);
      const std::size_t n = std::min<std::size_t>(1480, l4.size() - off);
      ih.more_fragments = off + n < l4.size();
      ih.payload_length = std::uint16_t(n);
      send(ipv4_frame(ih, std::span(l4).subspan(off, n)));
    }
    std::vector<std::byte> buf(4000);
    auto got = u->recv_from(buf, in_5s());
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->size, payload.size());
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), buf.begin()));
    EXPECT_EQ(st.counters(0).total_drops(), 0u);
  });
}

TEST_F(udp_raw, RecvFromTimesOutAtItsDeadlineAndTheSocketStillWorks) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::any_address, port}});
    ASSERT_TRUE(u.has_value());
    std::array<std::byte, 16> buf;
    const std::uint64_t t0 = now_ns();
    auto got = u->recv_from(buf, t0 + 30 * ms);
    ASSERT_FALSE(got.has_value());
    EXPECT_EQ(got.error(), std::errc::timed_out);
    EXPECT_GE(now_ns() - t0, 30 * ms);
    send(udp_frame(port, bytes_of("late")));
    got = u->recv_from(buf, in_5s());
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(text_of(std::span(buf).first(got->size)), "late");
  });
}

TEST_F(udp_raw, CloseFromAnotherFiberWakesAReaderWithOperationCanceled) {
  with_stack([&](stack& st) {
    auto u = bind(st, {.local = {net::any_address, port}});
    ASSERT_TRUE(u.has_value());
    std::error_code seen;
    auto reader = spawn([&] {
      std::array<std::byte, 16> buf;
      auto got = u->recv_from(buf, in_5s());
      if (!got) seen = got.error();
    }).value();
    this_fiber::sleep_for(10ms);
    u->close();
    reader.join();
    EXPECT_EQ(seen, std::errc::operation_canceled);
    send(udp_frame(port, bytes_of("too late")));
    const auto out = drain();
    EXPECT_EQ(out.size(), 1u) << "a closed port is answered with port unreachable";
  });
}

TEST_F(udp_raw, BindPicksEphemeralPortsAndReportsErrors) {
  with_stack([&](stack& st) {
    auto a = bind(st, {.local = {net::any_address, 0}});
    auto b = bind(st, {.local = {net::any_address, 0}});
    ASSERT_TRUE(a && b);
    EXPECT_GE(a->local().port, 49152);
    EXPECT_GE(b->local().port, 49152);
    EXPECT_NE(a->local().port, b->local().port);
    auto again = bind(st, {.local = {net::ipv4_address{stack_ip}, a->local().port}});
    ASSERT_FALSE(again.has_value());
    EXPECT_EQ(again.error(), std::errc::address_in_use);
    EXPECT_EQ(bind(st, {.local = {net::ipv4_address{peer_ip}, 0}}).error(), std::errc::address_not_available);
    EXPECT_EQ(bind(st, {.local = {net::any_address, 0}, .receive_queue = 0}).error(), std::errc::invalid_argument);
    const std::uint16_t p = a->local().port;
    a->close();
    auto reuse = bind(st, {.local = {net::any_address, p}});
    ASSERT_TRUE(reuse.has_value()) << "a closed port stays taken";
    EXPECT_EQ(reuse->local().port, p);
  });
}

// Two stacks on the two ends of the wire, each with its RX queue on a core
// of its own when there are two.
class udp_two_stacks : public udp_wire_test {
 protected:
  void with_stacks(const std::function<void(stack&, stack&)>& body) {
    rt_->run([&] {
      auto a = make_stack(link_->a(), stack_ip, 0);
      auto b = make_stack(link_->b(), peer_ip, cores_ - 1);
      ASSERT_TRUE(a && b);
      body(*a, *b);
      this_fiber::sleep_for(10ms);
      a.reset();
      b.reset();
    });
  }
};

TEST_F(udp_two_stacks, DatagramsGoBothWays) {
  with_stacks([&](stack& sa, stack& sb) {
    auto a = bind(sa, {.local = {net::any_address, 0}});
    auto b = bind(sb, {.local = {net::any_address, port}});
    ASSERT_TRUE(a && b);
    constexpr int rounds = 200;
    int echoed = 0;
    auto server = spawn([&] {
      std::vector<std::byte> buf(2048);
      for (int i = 0; i < rounds; ++i) {
        auto got = b->recv_from(buf, in_5s());
        if (!got || !b->send_to(got->from, std::span(buf).first(got->size))) return;
      }
    }, {.core = cores_ - 1}).value();
    std::vector<std::byte> out, in(2048);
    for (int i = 0; i < rounds; ++i) {
      out.resize(std::size_t(i * 37) % (largest_payload + 1));
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = std::byte(k + std::size_t(i));
      ASSERT_TRUE(a->send_to({net::ipv4_address{peer_ip}, port}, out));
      auto got = a->recv_from(in, in_5s());
      ASSERT_TRUE(got.has_value()) << "round " << i << ": " << got.error().message();
      EXPECT_EQ(got->from, (net::endpoint{net::ipv4_address{peer_ip}, port}));
      if (got->size == out.size() && std::equal(out.begin(), out.end(), in.begin())) ++echoed;
    }
    server.join();
    EXPECT_EQ(echoed, rounds);
    for (unsigned c = 0; c < sa.cores(); ++c) EXPECT_EQ(sa.counters(c).total_drops(), 0u);
    for (unsigned c = 0; c < sb.cores(); ++c) EXPECT_EQ(sb.counters(c).total_drops(), 0u);
  });
}

// Sockets on IPv6 addresses (issue 21, stack/family.hh): :: serves IPv4
// and reports its peers as IPv4-mapped addresses, as a kernel's dual-stack
// socket does; what only IPv6 could carry is refused with EAFNOSUPPORT
// while the stack has no IPv6 path.
TEST_F(udp_two_stacks, SocketsOnIpv6AddressesServeIpv4AsMappedAddresses) {
  with_stacks([&](stack& sa, stack& sb) {
    const net::address any6 = net::any_address_v6;
    const net::address mapped_peer = net::ipv6_address::v4_mapped(net::ipv4_address{peer_ip});
    const net::address fd77 = *net::address::parse("fd77::2");

    auto l = sb.backend().listen({.local = {any6, 7001}});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    net::tcp_listener listener(std::move(*l));
    EXPECT_EQ(listener.local(), (net::endpoint{any6, 7001}));
    auto c = sa.backend().connect({mapped_peer, 7001}, in_5s(), {});
    ASSERT_TRUE(c.has_value()) << c.error().message();
    net::tcp_stream client(std::move(*c));
    auto s = listener.accept(in_5s());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(client.remote(), (net::endpoint{mapped_peer, 7001}));
    EXPECT_TRUE(client.local().addr.is_v6());
    EXPECT_EQ(s->local(), (net::endpoint{mapped_peer, 7001}));
    EXPECT_EQ(s->remote().addr, client.local().addr);
    EXPECT_EQ(s->remote().port, client.local().port);
    s->abort();
    client.abort();
    listener.close();

    // A v6_only listener takes no IPv4; these stacks have no IPv6 address,
    // so nothing of fd77::/64 is theirs or reachable.
    auto only6 = sb.backend().listen({.local = {any6, 7002}, .v6_only = true});
    ASSERT_TRUE(only6.has_value()) << only6.error().message();
    EXPECT_EQ(sa.backend().connect({mapped_peer, 7002}, in_5s(), {}).error(), std::errc::connection_refused);
    net::tcp_listener(std::move(*only6)).close();
    EXPECT_EQ(sb.backend().listen({.local = {fd77, 7002}}).error(), std::errc::address_not_available);
    EXPECT_EQ(sa.backend().connect({fd77, 7001}, in_5s(), {}).error(), std::errc::network_unreachable);

    auto u = bind(sb, {.local = {any6, port}});
    auto a = bind(sa, {.local = {net::any_address, 0}});
    ASSERT_TRUE(u && a);
    ASSERT_TRUE(a->send_to({net::ipv4_address{peer_ip}, port}, bytes_of("ping")));
    std::array<std::byte, 16> buf{};
    auto got = u->recv_from(buf, in_5s());
    ASSERT_TRUE(got.has_value()) << got.error().message();
    EXPECT_EQ(got->from.addr, net::address(net::ipv6_address::v4_mapped(net::ipv4_address{stack_ip})));
    ASSERT_TRUE(u->send_to(got->from, bytes_of("pong")));  // a mapped address is sent to over IPv4
    auto back = a->recv_from(buf, in_5s());
    ASSERT_TRUE(back.has_value()) << back.error().message();
    EXPECT_EQ(back->from, (net::endpoint{net::ipv4_address{peer_ip}, port}));
    EXPECT_EQ(u->send_to({fd77, 9}, bytes_of("x")).error(), std::errc::network_unreachable);
    EXPECT_EQ(bind(sb, {.local = {fd77, 0}}).error(), std::errc::address_not_available);
  });
}

// stream_options::linger = 0 on the stack: close() sends RST, and the peer's
// read is ECONNRESET instead of an end of stream.
TEST_F(udp_two_stacks, StreamLingerZeroMakesCloseAReset) {
  with_stacks([&](stack& sa, stack& sb) {
    auto l = sb.backend().listen({.local = {net::any_address, 7000}});
    ASSERT_TRUE(l.has_value());
    net::tcp_listener listener(std::move(*l));
    for (const bool linger_zero : {true, false}) {
      net::stream_options o;
      if (linger_zero) o.linger = 0ms;
      auto c = sa.backend().connect({net::ipv4_address{peer_ip}, 7000}, in_5s(), o);
      ASSERT_TRUE(c.has_value()) << c.error().message();
      net::tcp_stream client(std::move(*c));
      auto s = listener.accept(in_5s());
      ASSERT_TRUE(s.has_value());
      client.close();
      std::array<std::byte, 8> buf;
      auto n = s->read(buf, in_5s());
      if (linger_zero) {
        ASSERT_FALSE(n.has_value());
        EXPECT_EQ(n.error(), std::errc::connection_reset);
      } else {
        ASSERT_TRUE(n.has_value());
        EXPECT_EQ(*n, 0u) << "an orderly close is a FIN";
      }
      s->abort();
    }
    listener.close();
  });
}

}  // namespace
}  // namespace affine::stack
