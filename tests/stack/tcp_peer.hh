#pragma once
// A stack on the in-process wire's end a, one core, listening on
// listen_port; the test is a TCP peer on end b that writes its segments by
// hand (frames built with the wire emitters) and reads what the stack sends.
// Shared by the bad-input and ACK-batching tests.

#include <gtest/gtest.h>

#include <cstring>
#include <expected>
#include <functional>
#include <vector>

#include "affine/net.hh"
#include "stack/stack.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/ipv4.hh"
#include "stack/wire/tcp.hh"
#include "tests/stack/wire_peer.hh"

namespace affine::stack::testing {

inline constexpr std::uint32_t stack_ip = 0x0a630001;  // 10.99.0.1
inline constexpr std::uint32_t peer_ip = 0x0a630002;   // 10.99.0.2
inline constexpr std::uint16_t listen_port = 7000;

inline frame ipv4_frame(ip_protocol proto, std::span<const std::byte> l4) {
  frame f(14 + 20 + l4.size());
  (void)emit_ethernet({.dst = stack_mac, .src = peer_mac, .type = ether_type::ipv4}, f);
  ipv4_header ih;
  ih.src = peer_ip;
  ih.dst = stack_ip;
  ih.protocol = proto;
  ih.payload_length = std::uint16_t(l4.size());
  (void)emit_ipv4(ih, std::span(f).subspan(14), checksum_mode::software);
  std::memcpy(f.data() + 34, l4.data(), l4.size());
  return f;
}

inline frame tcp_frame(const tcp_segment& seg) {
  std::vector<std::byte> l4(60 + seg.payload.size());
  const auto n = emit_tcp(seg, peer_ip, stack_ip, l4, checksum_mode::software);
  return ipv4_frame(ip_protocol::tcp, std::span(l4).first(*n));
}

// The peer's SYN from `sport` to listen_port, ISN 1000.
inline tcp_segment syn(std::uint16_t sport) {
  tcp_segment s;
  s.src_port = sport;
  s.dst_port = listen_port;
  s.control = tcp_control::syn;
  s.seq = seq32(1000);
  s.window = 65535;
  s.options.mss = 1460;
  return s;
}

// The TCP segment of a frame the stack sent (a view into the frame).
inline std::expected<tcp_view, parse_error> tcp_of(const frame& f) {
  auto ip = ipv4_view::parse(std::span(f).subspan(14));
  if (!ip) return std::unexpected(ip.error());
  return tcp_view::parse(ip->payload(), ip->src(), ip->dst());
}

class tcp_peer : public wire_peer {
 protected:
  explicit tcp_peer(const char* pool_prefix)
      : wire_peer({.pool_prefix = pool_prefix, .pool_mbufs = 4095, .max_cores = 1, .stack_ip = stack_ip,
                   .peer_ip = peer_ip, .drain_rounds = 5}) {}

  // Runs `body` in a fiber with a stack on end a listening on listen_port
  // (its configuration the default, as `tune` leaves it).
  void with_stack(const std::function<void(stack&)>& body, const std::function<void(stack_config&)>& tune = {}) {
    rt_->run([&] {
      stack_config sc;
      sc.address = stack_ip;
      if (tune) tune(sc);
      auto st = stack::create(*rt_, link_->a(), sc, std::vector<rxq_assignment>{{0, core_id{0}}});
      ASSERT_TRUE(st.has_value()) << st.error();
      auto l = (*st)->backend().listen({.local = {net::any_address, listen_port}});
      ASSERT_TRUE(l.has_value());
      net::tcp_listener listener(std::move(*l));
      listener_ = &listener;
      body(**st);
      listener_ = nullptr;
      listener.close();
      drain();
      st->reset();
      drain();
    });
  }

  // The three-way handshake from `sport` (in with_stack's body): returns the
  // accepted stream, and in `next` the peer's next segment (an ACK at
  // SEQ = 1001, ACK = the stack's ISS + 1, no options) to build data on.
  net::tcp_stream establish(std::uint16_t sport, tcp_segment& next) {
    send(tcp_frame(syn(sport)));
    const auto synack = drain();
    EXPECT_EQ(synack.size(), 1u);
    if (synack.empty()) return {};
    auto t = tcp_of(synack[0]);
    EXPECT_TRUE(t.has_value());
    if (!t) return {};
    next = syn(sport);
    next.control = tcp_control::none;
    next.seq = seq32(1001);
    next.ack = t->seq() + 1;
    next.options = {};
    send(tcp_frame(next));
    (void)drain();
    auto conn = listener_->accept(now_ns() + 1'000'000'000);
    EXPECT_TRUE(conn.has_value());
    return conn ? std::move(*conn) : net::tcp_stream{};
  }

  net::tcp_listener* listener_ = nullptr;  // the one with_stack made, while its body runs
};

}  // namespace affine::stack::testing
