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
#include "stack/wire/tcp.hh"

namespace affine::stack {
namespace {

constexpr std::uint32_t local = 0x0a000002, remote = 0x0a000009;

// The core a NIC would deliver the peer's SYN-ACK for `t` to.
unsigned nic_core(const std::vector<std::uint8_t>& key, const std::vector<std::uint16_t>& reta,
                  const std::vector<unsigned>& core_of_queue, const flow_tuple& t) {
  std::array<std::byte, 14 + 20 + 60> frame{};
  tcp_segment syn_ack{.src_port = t.remote_port, .dst_port = t.local_port, .control = tcp_control::syn};
  syn_ack.ack = seq32(1);
  const auto l4 = emit_tcp(syn_ack, t.remote_addr, t.local_addr, std::span(frame).subspan(34), checksum_mode::software);
  ipv4_header ih;
  ih.src = t.remote_addr;
  ih.dst = t.local_addr;
  ih.protocol = ip_protocol::tcp;
  ih.payload_length = std::uint16_t(*l4);
  (void)emit_ipv4(ih, std::span(frame).subspan(14), checksum_mode::software);
  (void)emit_ethernet({.dst = {}, .src = {}, .type = ether_type::ipv4}, frame);
  const auto h = drivers::frame_rss_hash(key, std::span(frame).first(34 + *l4));
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
};

TEST_F(rss_ports, APortPickedForACoreBringsTheRepliesToThatCore) {
  ASSERT_TRUE(steering.active());
  for (unsigned core : {0u, 1u})
    for (std::uint16_t rport : {80, 443, 3306, 6033}) {
      const flow_tuple t{local, remote, 0, rport};
      auto p = steering.pick(t, core, 49152, 65535, rport * 7u, [](const flow_tuple&) { return false; });
      ASSERT_TRUE(p.has_value());
      EXPECT_EQ(nic_core(key, reta, core_of_queue, {local, remote, *p, rport}), core) << "port " << *p;
    }
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
