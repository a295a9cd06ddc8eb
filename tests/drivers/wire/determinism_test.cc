// Same seed, same frames, same time advances: the same drops, copies, order
// and damage. This is what lets a failing lossy test replay.

#include <set>

#include "tests/drivers/wire/wire_fixture.hh"

namespace affine::drivers::wire::testing {
namespace {

impairments everything() {
  impairments imp;
  imp.loss = 0.05;
  imp.burst = gilbert_elliott{.good_to_bad = 0.01, .bad_to_good = 0.3};
  imp.duplicate = 0.05;
  imp.corrupt = 0.05;
  imp.reorder = 0.05;
  imp.reorder_gap = 3;
  imp.reorder_delay_ns = 50'000;
  imp.delay_ns = 20'000;
  imp.jitter_ns = 5'000;
  imp.rate_bytes_per_s = 200'000'000;  // 0.5 us per frame: paced, never overflowing
  return imp;
}

std::set<std::uint32_t> lost(const std::vector<arrival>& got, std::uint32_t n) {
  std::set<std::uint32_t> missing;
  for (std::uint32_t id = 0; id < n; ++id) missing.insert(id);
  for (const auto& a : got) missing.erase(a.id);
  return missing;
}

class determinism : public wire_test {
 protected:
  // One full run on a fresh link; the pools are reused.
  std::vector<arrival> replay(const impairments& imp, std::uint64_t seed, std::uint32_t n = 5000) {
    make(imp, seed);
    auto got = run(n);
    last_stats_ = link_->stats(side::a);
    link_.reset();
    return got;
  }

  direction_stats last_stats_;
};

TEST_F(determinism, same_seed_gives_identical_arrivals_and_counters) {
  const auto first = replay(everything(), 42);
  const direction_stats first_stats = last_stats_;
  const auto second = replay(everything(), 42);

  ASSERT_EQ(first.size(), second.size());
  EXPECT_TRUE(first == second) << "same seed, different arrivals (ids, bytes or times)";
  EXPECT_EQ(first_stats.dropped, last_stats_.dropped);
  EXPECT_EQ(first_stats.duplicated, last_stats_.duplicated);
  EXPECT_EQ(first_stats.corrupted, last_stats_.corrupted);
  EXPECT_EQ(first_stats.reordered, last_stats_.reordered);
  // The run really was impaired in every way, or the comparison proves little.
  EXPECT_GT(first_stats.drops(drop_reason::loss), 0u);
  EXPECT_GT(first_stats.drops(drop_reason::burst_loss), 0u);
  EXPECT_GT(first_stats.duplicated, 0u);
  EXPECT_GT(first_stats.corrupted, 0u);
  EXPECT_GT(first_stats.reordered, 0u);
}

TEST_F(determinism, different_seed_gives_different_drops) {
  impairments imp;
  imp.loss = 0.1;
  const auto drops_42 = lost(replay(imp, 42), 5000);
  const auto drops_43 = lost(replay(imp, 43), 5000);
  EXPECT_FALSE(drops_42.empty());
  EXPECT_NE(drops_42, drops_43);
}

TEST_F(determinism, loss_pattern_does_not_move_when_other_impairments_are_added) {
  impairments plain;
  plain.loss = 0.1;
  impairments busy = plain;
  busy.duplicate = 0.2;
  busy.reorder = 0.2;
  busy.reorder_gap = 2;
  busy.reorder_delay_ns = 10'000;
  busy.jitter_ns = 500;
  const auto drops_plain = lost(replay(plain, 7), 3000);
  const auto drops_busy = lost(replay(busy, 7), 3000);
  EXPECT_EQ(drops_plain, drops_busy);
}

TEST_F(determinism, the_two_directions_draw_from_different_streams) {
  impairments imp;
  imp.loss = 0.2;
  link_config cfg = config(imp, 9);
  cfg.b_to_a = imp;
  make(cfg);
  std::set<std::uint32_t> lost_a_to_b, lost_b_to_a;
  for (std::uint32_t id = 0; id < 500; ++id) {
    rte_mbuf* m = build(pool_a_, pattern(id, frame_len));
    link_->a().tx_burst(0, &m, 1);
    m = build(pool_b_, pattern(id, frame_len));
    link_->b().tx_burst(0, &m, 1);
    if (receive(side::b).empty()) lost_a_to_b.insert(id);
    if (receive(side::a).empty()) lost_b_to_a.insert(id);
  }
  EXPECT_FALSE(lost_a_to_b.empty());
  EXPECT_NE(lost_a_to_b, lost_b_to_a);
}

}  // namespace
}  // namespace affine::drivers::wire::testing
