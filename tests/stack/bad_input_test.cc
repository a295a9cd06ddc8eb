// Bad input (issue 5): frames with malformed headers, bad checksums,
// impossible flag combinations and options with bad lengths reach a stack
// over the in-process wire; each is dropped and counted under its reason,
// and a mutation run of valid frames crashes nothing and leaks no mbuf (the
// ASan+UBSan build runs this too).

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "affine/net.hh"
#include "affine/runtime.hh"
#include "base/xoshiro.hh"
#include "stack/stack.hh"
#include "stack/wire/arp.hh"
#include "stack/wire/checksum.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmp.hh"
#include "stack/wire/tcp.hh"
#include "stack/wire/udp.hh"
#include "tests/stack/tcp_peer.hh"

namespace affine::stack {
namespace {

using testing::frame, testing::peer_mac, testing::stack_mac, testing::stack_ip, testing::peer_ip,
    testing::listen_port, testing::ipv4_frame, testing::tcp_frame, testing::syn, testing::tcp_of;

// After editing a TCP frame's bytes: its checksum made right again, so that
// only the edit is wrong with it.
void fix_tcp_checksum(frame& f) {
  std::span<std::byte> l4 = std::span(f).subspan(34);
  l4[16] = l4[17] = std::byte{0};
  const std::uint16_t c = ipv4_transport_checksum(peer_ip, stack_ip, 6, l4, {}, checksum_mode::software);
  l4[16] = std::byte(c >> 8);
  l4[17] = std::byte(c);
}

void fix_ipv4_checksum(frame& f) {
  f[24] = f[25] = std::byte{0};
  const std::uint16_t c = internet_checksum(std::span(f).subspan(14, 20));
  f[24] = std::byte(c >> 8);
  f[25] = std::byte(c);
}

class bad_input : public testing::tcp_peer {
 protected:
  bad_input() : tcp_peer("bad_input_") {}
};

TEST_F(bad_input, AValidSynIsAnsweredWithASynAck) {
  with_stack([&](stack& st) {
    send(tcp_frame(syn(40000)));
    const auto out = drain();
    ASSERT_EQ(out.size(), 1u);
    auto t = tcp_of(out[0]);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->control(), tcp_control::syn);
    EXPECT_TRUE(t->ack());
    EXPECT_EQ(st.counters(0).total_drops(), 0u);
  });
}

// RFC 9293 3.1: a segment whose checksum fails is dropped. For an
// established connection its payload is copied to where in-order data is
// kept while it is summed (stack::tcp_in): the copy of a bad segment must
// never become readable, and the good one that follows is read as sent.
TEST_F(bad_input, ACorruptSegmentOfAConnectionLeavesNothingReadable) {
  with_stack([&](stack& st) {
    tcp_segment ack;
    auto conn = establish(40100, ack);
    ASSERT_TRUE(conn.is_open());

    std::array<std::byte, 64> payload;
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = std::byte('a' + i % 26);
    tcp_segment data = ack;
    data.psh = true;
    data.payload = payload;
    const frame good = tcp_frame(data);
    frame bad = good;
    bad[bad.size() - 10] ^= std::byte{0x20};  // in the payload; the checksum left as it was
    send(bad);
    (void)drain();
    EXPECT_EQ(st.counters(0).get(layer::tcp, parse_error::bad_checksum), 1u);
    std::array<std::byte, 64> got{};
    const auto none = conn.read(got, now_ns() + 20'000'000);
    EXPECT_FALSE(none.has_value()) << "read " << none.value_or(0) << " bytes of a corrupt segment";

    send(good);
    (void)drain();
    ASSERT_TRUE(conn.read_exactly(got, now_ns() + 1'000'000'000).has_value());
    EXPECT_EQ(got, payload);
    EXPECT_EQ(st.counters(0).get(layer::tcp, parse_error::bad_checksum), 1u);
    conn.abort();
  });
}

struct bad_case {
  const char* name;
  std::function<frame()> make;
  std::function<std::uint64_t(const core_counters&)> counter;
};

TEST_F(bad_input, EachMalformedFrameIsDroppedAndCountedUnderItsReason) {
  const std::vector<bad_case> cases{
      {"ethernet truncated", [] { return frame(10); },
       [](const core_counters& c) { return c.get(layer::ethernet, parse_error::truncated); }},
      {"not our MAC",
       [] {
         frame f = tcp_frame(syn(40001));
         f[5] = std::byte{0x77};
         return f;
       },
       [](const core_counters& c) { return c.get(drop::not_our_mac); }},
      {"unknown ethertype",
       [] {
         frame f = tcp_frame(syn(40002));
         f[12] = std::byte{0x88};
         f[13] = std::byte{0xb5};
         return f;
       },
       [](const core_counters& c) { return c.get(drop::unknown_ethertype); }},
      {"ipv4 version 6",
       [] {
         frame f = tcp_frame(syn(40003));
         f[14] = std::byte{0x65};
         fix_ipv4_checksum(f);
         return f;
       },
       [](const core_counters& c) { return c.get(layer::ipv4, parse_error::bad_version); }},
      {"ipv4 IHL 4",
       [] {
         frame f = tcp_frame(syn(40004));
         f[14] = std::byte{0x44};
         return f;
       },
       [](const core_counters& c) { return c.get(layer::ipv4, parse_error::bad_header_length); }},
      {"ipv4 total length past the frame",
       [] {
         frame f = tcp_frame(syn(40005));
         f[16] = std::byte{0x05};
         fix_ipv4_checksum(f);
         return f;
       },
       [](const core_counters& c) { return c.get(layer::ipv4, parse_error::bad_total_length); }},
      {"ipv4 bad header checksum",
       [] {
         frame f = tcp_frame(syn(40006));
         f[24] ^= std::byte{0x01};
         return f;
       },
       [](const core_counters& c) { return c.get(layer::ipv4, parse_error::bad_checksum); }},
      {"tcp bad checksum",
       [] {
         frame f = tcp_frame(syn(40007));
         f[34 + 16] ^= std::byte{0x01};
         return f;
       },
       [](const core_counters& c) { return c.get(layer::tcp, parse_error::bad_checksum); }},
      {"tcp SYN+FIN",
       [] {
         frame f = tcp_frame(syn(40008));
         f[34 + 13] |= std::byte{0x01};
         fix_tcp_checksum(f);
         return f;
       },
       [](const core_counters& c) { return c.get(layer::tcp, parse_error::bad_flags); }},
      {"tcp SYN+RST",
       [] {
         frame f = tcp_frame(syn(40009));
         f[34 + 13] |= std::byte{0x04};
         fix_tcp_checksum(f);
         return f;
       },
       [](const core_counters& c) { return c.get(layer::tcp, parse_error::bad_flags); }},
      {"tcp data offset 4",
       [] {
         frame f = tcp_frame(syn(40010));
         f[34 + 12] = std::byte{0x40};
         fix_tcp_checksum(f);
         return f;
       },
       [](const core_counters& c) { return c.get(layer::tcp, parse_error::bad_header_length); }},
      {"tcp MSS option of length 3",
       [] {
         frame f = tcp_frame(syn(40011));
         const std::size_t opt = 34 + 20;
         EXPECT_EQ(f[opt], std::byte{2});  // MSS is the first option of this SYN
         f[opt + 1] = std::byte{3};
         fix_tcp_checksum(f);
         return f;
       },
       [](const core_counters& c) { return c.get(layer::tcp, parse_error::bad_option); }},
      {"tcp option of length 0",
       [] {
         frame f = tcp_frame(syn(40012));
         f[34 + 20 + 1] = std::byte{0};
         fix_tcp_checksum(f);
         return f;
       },
       [](const core_counters& c) { return c.get(layer::tcp, parse_error::bad_option); }},
      {"udp length past the datagram",
       [] {
         std::array<std::byte, 12> l4{};
         (void)emit_udp({.src_port = 5, .dst_port = 9}, std::array<std::byte, 4>{}, peer_ip, stack_ip, l4,
                        checksum_mode::software);
         l4[5] = std::byte{40};
         return ipv4_frame(ip_protocol::udp, l4);
       },
       [](const core_counters& c) { return c.get(layer::udp, parse_error::bad_length); }},
      {"icmp bad checksum",
       [] {
         std::array<std::byte, 16> l4{};
         (void)emit_icmp({.type = icmp_type::echo_request, .id = 1, .seq = 1}, l4);
         l4[2] ^= std::byte{0xff};
         return ipv4_frame(ip_protocol::icmp, std::span(l4).first(8));
       },
       [](const core_counters& c) { return c.get(layer::icmp, parse_error::bad_checksum); }},
  };
  with_stack([&](stack& st) {
    for (const bad_case& bc : cases) {
      const std::uint64_t before = bc.counter(st.counters(0));
      send(bc.make());
      const auto out = drain();
      EXPECT_EQ(bc.counter(st.counters(0)), before + 1) << bc.name;
      EXPECT_TRUE(out.empty()) << bc.name << ": a dropped frame was answered";
    }
    EXPECT_EQ(st.connections(), 0u) << "a malformed SYN made a connection";
  });
}

// Valid frames, each mutated (bit flips, byte overwrites, cuts) from a fixed
// seed: whatever the stack makes of them, it does not crash, every frame is
// received, and (TearDown) every mbuf comes back.
TEST_F(bad_input, MutatedFramesNeverCrashTheStack) {
  std::vector<frame> seeds{tcp_frame(syn(41000))};
  {
    tcp_segment data = syn(41001);
    data.control = tcp_control::none;
    data.ack = seq32(1);
    data.options = {};
    static const std::array<std::byte, 32> payload{};
    data.payload = payload;
    seeds.push_back(tcp_frame(data));
    std::array<std::byte, 40> echo{};
    const auto n = emit_icmp({.type = icmp_type::echo_request, .id = 7, .seq = 1, .data = std::span(payload).first(24)}, echo);
    seeds.push_back(ipv4_frame(ip_protocol::icmp, std::span(echo).first(*n)));
    frame arp(42);
    (void)emit_ethernet({.dst = broadcast_mac, .src = peer_mac, .type = ether_type::arp}, arp);
    (void)emit_arp({arp_op::request, peer_mac, peer_ip, {}, stack_ip}, std::span(arp).subspan(14));
    seeds.push_back(arp);
  }
  xoshiro256ss rng({mix64(20261130), mix64(1), mix64(2), mix64(3)});
  constexpr unsigned frames = 4000;
  with_stack([&](stack& st) {
    for (unsigned i = 0; i < frames; ++i) {
      frame f = seeds[rng.next() % seeds.size()];
      switch (rng.next() % 3) {
        case 0: f[rng.next() % f.size()] ^= std::byte(1u << (rng.next() % 8)); break;
        case 1: f[rng.next() % f.size()] = std::byte(rng.next()); break;
        default: f.resize(rng.next() % f.size() + 1); break;
      }
      send(f);
      if (i % 64 == 63) (void)drain();
    }
    (void)drain();
    EXPECT_EQ(st.counters(0).rx_packets.load(), sent_) << "frames were lost before the stack saw them";
  });
}

}  // namespace
}  // namespace affine::stack
