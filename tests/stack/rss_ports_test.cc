// RSS-aware ephemeral ports: the port picked for a core makes the peer's
// packets hash, as a NIC hashes a real frame (drivers/dpdk/rss.hh's
// frame_rss_hash, tested against the Microsoft vectors), to a queue of that
// core.

#include <gtest/gtest.h>

#include <array>
#include <set>

#include "drivers/dpdk/rss.hh"
#include "stack/rss_ports.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/ipv4.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/tcp.hh"

namespace affine::stack {
namespace {

constexpr flow_address local = v4_flow(0x0a000002), remote = v4_flow(0x0a000009);
constexpr flow_address local6 = {0xfd, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
constexpr flow_address remote6 = {0xfd, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 9};

// The core a NIC would deliver the peer's SYN-ACK for `t` to.
unsigned nic_core(const std::vector<std::uint8_t>& key, const std::vector<std::uint16_t>& reta,
                  const std::vector<unsigned>& core_of_queue, const flow_tuple& t) {
  std::array<std::byte, 14 + 40 + 60> frame{};
  tcp_segment syn_ack{.src_port = t.remote_port, .dst_port = t.local_port, .control = tcp_control::syn};
  syn_ack.ack = seq32(1);
  const std::size_t ip_len = t.v4() ? 20 : 40;
  const auto l4 = emit_tcp(syn_ack, outbound_pseudo({t.remote_addr, t.local_addr, 0, 0}, 6),
                           std::span(frame).subspan(14 + ip_len), checksum_mode::software);
  if (t.v4()) {
    ipv4_header ih;
    ih.src = v4_address(t.remote_addr);
    ih.dst = v4_address(t.local_addr);
    ih.protocol = ip_protocol::tcp;
    ih.payload_length = std::uint16_t(*l4);
    (void)emit_ipv4(ih, std::span(frame).subspan(14), checksum_mode::software);
  } else {
    (void)emit_ipv6({.src = t.remote_addr, .dst = t.local_addr, .next = 6, .payload_length = std::uint16_t(*l4)},
                    std::span(frame).subspan(14));
  }
  (void)emit_ethernet({.dst = {}, .src = {}, .type = t.v4() ? ether_type::ipv4 : ether_type::ipv6}, frame);
  const auto h = drivers::frame_rss_hash(key, std::span(frame).first(14 + ip_len + *l4));
  EXPECT_TRUE(h.has_value());
  return core_of_queue[reta[*h % reta.size()]];
}

class rss_ports : public ::testing::Test {
 protected:
  std::vector<std::uint8_t> key = drivers::symmetric_rss_key(40);
  std::vector<unsigned> core_of_queue{0, 1, 0, 1};
  std::vector<std::uint16_t> reta = drivers::reta_from_plan(
      std::vector<rxq_assignment>{{0, core_id{0}}, {1, core_id{1}}, {2, core_id{0}}, {3, core_id{1}}}, 128);
  rss_steering steering{key, reta, core_of_queue};

  // For each core and a few remote ports: the port picked for the core
  // brings the peer's replies there.
  void expect_picks_reach_their_core(const flow_address& l, const flow_address& r) {
    for (unsigned core : {0u, 1u})
      for (std::uint16_t rport : {80, 443, 3306, 6033}) {
        const flow_tuple t{l, r, 0, rport};
        auto p = steering.pick(t, core, 49152, 65535, rport * 7u, [](const flow_tuple&) { return false; });
        ASSERT_TRUE(p.has_value());
        EXPECT_EQ(nic_core(key, reta, core_of_queue, {l, r, *p, rport}), core) << "port " << *p;
      }
  }
};

TEST_F(rss_ports, APortPickedForACoreBringsTheRepliesToThatCore) {
  ASSERT_TRUE(steering.active());
  expect_picks_reach_their_core(local, remote);
}

TEST_F(rss_ports, OverIpv6TooAPortPickedForACoreBringsTheRepliesToThatCore) {
  ASSERT_TRUE(steering.active());
  expect_picks_reach_their_core(local6, remote6);
}

TEST_F(rss_ports, PortsInUseAreSkippedAndAFullRangeIsNoPort) {
  const flow_tuple t{local, remote, 0, 80};
  std::set<std::uint16_t> used;
  for (int i = 0; i < 20; ++i) {
    auto p = steering.pick(t, 1, 49152, 49300, 0, [&](const flow_tuple& c) { return used.contains(c.local_port); });
    ASSERT_TRUE(p.has_value());
    EXPECT_TRUE(used.insert(*p).second);
  }
  EXPECT_FALSE(steering.pick(t, 0, 49152, 49300, 0, [](const flow_tuple&) { return true; }).has_value());
}

TEST_F(rss_ports, WithoutATableOrWithOneCoreEveryPortQualifies) {
  EXPECT_FALSE(rss_steering(key, {}, core_of_queue).active());
  EXPECT_FALSE(rss_steering(key, reta, {0, 0, 0, 0}).active());
  const rss_steering off;
  auto p = off.pick({local, remote, 0, 80}, 1, 50000, 50010, 3, [](const flow_tuple&) { return false; });
  EXPECT_EQ(p, std::optional<std::uint16_t>(50003));
}

}  // namespace
}  // namespace affine::stack
