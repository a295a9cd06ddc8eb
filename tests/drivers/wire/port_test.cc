// The ends as drivers::port: what they report, frames both ways through
// several TX queues, pools, malformed frames, teardown with frames in
// flight, the real clock, configuration errors.

#include <chrono>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "tests/drivers/wire/wire_fixture.hh"

namespace affine::drivers::wire::testing {
namespace {

using wire_port = wire_test;

TEST_F(wire_port, ends_report_names_macs_queues_and_their_own_pools) {
  link_config cfg = config(impairments{});
  cfg.b.tx_queues = 4;
  cfg.b.mtu = 9000;
  make(cfg);
  port& a = link_->a();
  port& b = link_->b();
  EXPECT_EQ(a.name(), "wire.a");
  EXPECT_EQ(b.name(), "wire.b");
  EXPECT_EQ(a.mac(), (mac_address{2, 0, 0, 0, 0, 1}));
  EXPECT_EQ(b.mac(), (mac_address{2, 0, 0, 0, 0, 2}));
  EXPECT_EQ(a.rx_queue_count(), 1u);
  EXPECT_EQ(a.tx_queue_count(), 1u);
  EXPECT_EQ(b.tx_queue_count(), 4u);
  EXPECT_EQ(b.caps().max_tx_queues, 4u);
  EXPECT_EQ(b.caps().mtu, 9000u);
  EXPECT_FALSE(b.caps().rx_interrupts);
  EXPECT_EQ(a.pool(0), pool_a_);
  EXPECT_EQ(b.pool(3), pool_b_);
  EXPECT_TRUE(a.link().up);
  EXPECT_TRUE(a.owner(0).try_lock());
  EXPECT_FALSE(a.owner(0).try_lock());
  a.owner(0).unlock();
}

TEST_F(wire_port, frames_cross_both_ways_from_every_tx_queue_into_the_receivers_pool) {
  link_config cfg = config(impairments{});
  cfg.b.tx_queues = 3;
  make(cfg);
  for (std::uint32_t id = 0; id < 30; ++id) {
    rte_mbuf* m = build(pool_b_, pattern(id, 64 + id));
    ASSERT_EQ(link_->b().tx_burst(id % 3, &m, 1), 1);
  }
  send(100);
  EXPECT_EQ(rte_mempool_in_use_count(pool_b_), 1u) << "b's 30 sent mbufs freed; a's one frame sits in b's pool";
  const auto at_b = drain();
  ASSERT_EQ(at_b.size(), 1u);
  EXPECT_EQ(at_b[0].id, 100u);
  ASSERT_EQ(at_a_.size(), 30u);
  for (std::uint32_t id = 0; id < 30; ++id) EXPECT_EQ(at_a_[id].bytes, pattern(id, 64 + id));
  EXPECT_EQ(link_->a().stats().rx_packets, 30u);
  EXPECT_EQ(link_->b().stats().tx_packets, 30u);
  EXPECT_EQ(link_->a().stats().tx_bytes, 100u);
}

TEST_F(wire_port, malformed_and_chained_frames_cross_unharmed) {
  impairments imp;
  imp.corrupt = 1.0;  // must skip the empty frame, not crash on it
  make(imp);
  const std::vector<std::uint32_t> short_lens{0, 1, 13, 17};  // none holds even an Ethernet header and id
  for (std::uint32_t len : short_lens) send(len, len);
  // A frame in two segments.
  rte_mbuf* head = build(pool_a_, pattern(7, 40));
  rte_mbuf* tail = build(pool_a_, pattern(8, 30));
  ASSERT_EQ(rte_pktmbuf_chain(head, tail), 0);
  ASSERT_EQ(link_->a().tx_burst(0, &head, 1), 1);

  const auto got = drain();
  ASSERT_EQ(got.size(), 5u);
  for (std::size_t i = 0; i < short_lens.size(); ++i) EXPECT_EQ(got[i].bytes.size(), short_lens[i]);
  EXPECT_EQ(got[4].bytes.size(), 70u);
  EXPECT_EQ(link_->stats(side::a).corrupted, 4u) << "every frame with a byte in it is damaged";
}

TEST_F(wire_port, frames_in_flight_go_back_to_their_pool_when_the_link_goes) {
  impairments imp;
  imp.delay_ns = 1'000'000;
  imp.reorder = 0.5;
  imp.reorder_gap = 1000;  // held frames that nothing will release
  make(imp);
  for (std::uint32_t id = 0; id < 200; ++id) send(id);
  EXPECT_EQ(link_->in_flight(side::a), 200u);
  EXPECT_EQ(rte_mempool_in_use_count(pool_b_), 200u);
  link_.reset();
  EXPECT_EQ(rte_mempool_in_use_count(pool_b_), 0u);
}

TEST_F(wire_port, xstats_name_every_drop_reason_per_direction) {
  impairments imp;
  imp.loss = 1.0;
  make(imp);
  send(0);
  const auto xs = link_->a().xstats();
  auto value = [&](std::string_view name) -> std::optional<std::uint64_t> {
    for (const auto& [n, v] : xs)
      if (n == name) return v;
    return std::nullopt;
  };
  EXPECT_EQ(value("wire_out_dropped_loss"), 1u);
  EXPECT_EQ(value("wire_out_sent"), 1u);
  for (std::string_view r : {"burst_loss", "queue_full", "rate_limit", "no_mbuf", "oversize"})
    EXPECT_EQ(value(fmt::format("wire_in_dropped_{}", r)), 0u) << r;
}

TEST_F(wire_port, healing_a_lossy_link_lets_frames_through_again) {
  impairments imp;
  imp.loss = 1.0;
  make(imp);
  send(0);
  EXPECT_TRUE(drain().empty());
  ASSERT_TRUE(link_->set_impairments(side::a, impairments{}));
  send(1);
  EXPECT_EQ(drain().size(), 1u);
}

TEST_F(wire_port, the_real_clock_delivers_after_the_delay_has_passed) {
  impairments imp;
  imp.delay_ns = 2'000'000;
  link_config cfg = config(imp);
  cfg.clock = clock_kind::monotonic;
  make(cfg);
  const auto start = std::chrono::steady_clock::now();
  send(0);
  std::vector<arrival> got;
  while (got.empty() && std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    got = receive();
    if (got.empty()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2));
}

TEST_F(wire_port, bad_configuration_is_refused_with_the_field_named) {
  impairments imp;
  imp.loss = 1.5;
  auto made = link::create(config(imp));
  ASSERT_FALSE(made.has_value());
  EXPECT_EQ(made.error(), "wire a_to_b: wire impairment 'loss' = 1.5: must be a probability in [0, 1]");

  link_config cfg = config(impairments{});
  cfg.b_to_a.burst = gilbert_elliott{.good_to_bad = -0.1};
  made = link::create(cfg);
  ASSERT_FALSE(made.has_value());
  EXPECT_EQ(made.error(), "wire b_to_a: wire impairment 'burst.good_to_bad' = -0.1: must be a probability in [0, 1]");

  cfg = config(impairments{});
  cfg.a.tx_queues = 0;
  made = link::create(cfg);
  ASSERT_FALSE(made.has_value());
  EXPECT_EQ(made.error(), "wire end a: tx_queues must be at least 1");

  make(impairments{});
  imp = impairments{};
  imp.queue_frames = 0;
  const auto changed = link_->set_impairments(side::b, imp);
  ASSERT_FALSE(changed.has_value());
  EXPECT_EQ(changed.error(), "wire impairment 'queue_frames' = 0: must be at least 1");
}

}  // namespace
}  // namespace affine::drivers::wire::testing
