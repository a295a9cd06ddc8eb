// Delay, jitter, the rate limiter, and the bounds that make a drop a counted
// one: queue_full, rate_limit, oversize, no_mbuf.

#include <algorithm>

#include "tests/drivers/wire/wire_fixture.hh"

namespace affine::drivers::wire::testing {
namespace {

using timing = wire_test;

TEST_F(timing, delay_holds_a_frame_until_the_clock_reaches_its_arrival) {
  impairments imp;
  imp.delay_ns = 5'000'000;
  make(imp);
  link_->advance_to(1'000);
  send(0);
  EXPECT_EQ(link_->next_arrival_ns(), 5'001'000u);
  EXPECT_EQ(link_->in_flight(side::a), 1u);
  expect_arrival_at(5'001'000, 0);
  EXPECT_EQ(link_->in_flight(side::a), 0u);
  EXPECT_FALSE(link_->next_arrival_ns().has_value());
}

TEST_F(timing, the_clock_never_goes_back) {
  make(impairments{});
  link_->advance_to(100);
  link_->advance_to(50);
  EXPECT_EQ(link_->now_ns(), 100u);
}

TEST_F(timing, jitter_spreads_arrivals_around_the_delay) {
  impairments imp;
  imp.delay_ns = 1'000'000;
  imp.jitter_ns = 200'000;
  make(imp, 23);
  std::vector<std::int64_t> offsets;
  for (std::uint32_t id = 0; id < 2000; ++id) {
    const std::uint64_t sent_at = link_->now_ns();
    send(id);
    const auto got = drain();
    ASSERT_EQ(got.size(), 1u);
    offsets.push_back(std::int64_t(got[0].at_ns - sent_at));
  }
  const auto [lo, hi] = std::minmax_element(offsets.begin(), offsets.end());
  EXPECT_GE(*lo, 800'000);
  EXPECT_LE(*hi, 1'200'000);
  EXPECT_LT(*lo, 820'000) << "jitter should reach near its lower bound";
  EXPECT_GT(*hi, 1'180'000) << "... and its upper bound";
}

TEST_F(timing, rate_limit_paces_frames_at_the_configured_bytes_per_second) {
  impairments imp;
  imp.rate_bytes_per_s = 1'000'000;  // 1000-byte frames: one per millisecond
  imp.delay_ns = 500;
  make(imp);
  for (std::uint32_t id = 0; id < 10; ++id) send(id, 1000);
  const auto got = drain();
  ASSERT_EQ(got.size(), 10u);
  for (std::uint32_t i = 0; i < 10; ++i) {
    EXPECT_EQ(got[i].id, i);
    EXPECT_EQ(got[i].at_ns, (i + 1) * 1'000'000u + 500) << "frame " << i;
  }
}

TEST_F(timing, rate_limit_drops_what_overflows_its_backlog_and_recovers) {
  impairments imp;
  imp.rate_bytes_per_s = 1'000'000;
  imp.rate_queue_bytes = 5000;
  make(imp);
  // The first frame goes straight on the idle link; four more fit the 5000
  // byte backlog behind it; the rest overflow.
  for (std::uint32_t id = 0; id < 20; ++id) send(id, 1000);
  EXPECT_EQ(link_->stats(side::a).drops(drop_reason::rate_limit), 15u);
  EXPECT_EQ(link_->in_flight(side::a), 5u);
  // Once the backlog has drained, frames are taken again.
  link_->advance_to(5'000'000);
  send(20, 1000);
  const auto got = drain();
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got.back().id, 20u);
  EXPECT_EQ(link_->stats(side::a).total_drops(), 15u);
}

TEST_F(timing, a_full_in_flight_queue_drops_and_counts_queue_full) {
  impairments imp;
  imp.delay_ns = 1'000'000;
  imp.queue_frames = 8;
  make(imp);
  for (std::uint32_t id = 0; id < 20; ++id) send(id);
  EXPECT_EQ(link_->in_flight(side::a), 8u);
  const direction_stats s = link_->stats(side::a);
  EXPECT_EQ(s.drops(drop_reason::queue_full), 12u);
  EXPECT_EQ(s.total_drops(), 12u);
  const auto got = drain();
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got.back().id, 7u);
}

TEST_F(timing, a_duplicate_that_does_not_fit_the_queue_is_a_counted_drop) {
  impairments imp;
  imp.delay_ns = 1'000;
  imp.duplicate = 1.0;
  imp.queue_frames = 3;
  make(imp);
  send(0);
  send(1);  // its copy finds the queue full
  const direction_stats s = link_->stats(side::a);
  EXPECT_EQ(s.duplicated, 2u);
  EXPECT_EQ(s.drops(drop_reason::queue_full), 1u);
  EXPECT_EQ(drain().size(), 3u);
}

TEST_F(timing, frames_over_the_mtu_are_tx_errors) {
  make(impairments{});
  send(0, 1518);  // 1500 + Ethernet header + one VLAN tag
  send(1, 1519);
  const auto got = drain();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, 0u);
  EXPECT_EQ(link_->stats(side::a).drops(drop_reason::oversize), 1u);
  EXPECT_EQ(link_->a().stats().tx_errors, 1u);
  EXPECT_EQ(link_->a().stats().tx_packets, 2u);
}

TEST_F(timing, an_empty_receiving_pool_drops_and_counts_no_mbuf) {
  extra_pool_ = make_pool(8);
  ASSERT_NE(extra_pool_, nullptr);
  link_config cfg = config(impairments{});
  cfg.b.pool = extra_pool_;
  make(cfg);
  std::vector<rte_mbuf*> pkts;
  for (std::uint32_t id = 0; id < 10; ++id) pkts.push_back(build(pool_a_, pattern(id, frame_len)));
  ASSERT_EQ(link_->a().tx_burst(0, pkts.data(), 10), 10);
  EXPECT_EQ(link_->stats(side::a).drops(drop_reason::no_mbuf), 2u);
  EXPECT_EQ(link_->b().stats().rx_nombuf, 2u);
  EXPECT_EQ(rte_mempool_in_use_count(pool_a_), 0u) << "the sender's mbufs are freed once taken";
  rte_mbuf* got[16];
  const std::uint16_t n = link_->b().rx_burst(0, got, 16);
  ASSERT_EQ(n, 8);
  for (std::uint16_t i = 0; i < n; ++i) {
    EXPECT_EQ(got[i]->pool, extra_pool_);
    rte_pktmbuf_free(got[i]);
  }
}

}  // namespace
}  // namespace affine::drivers::wire::testing
