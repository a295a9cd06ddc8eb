// Each seed's effect, in its direction, on the shipped scenario scaled down
// (fewer cores, clients and milliseconds) so the suite stays fast.

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/sim/sim_test_util.hh"

namespace affine::sim {
namespace {

using test::run;

TEST(seeds, seed_000_sync_rx_wakeups_pile_work_onto_the_nics_node) {
  const test::outcome o = run("seed-000", {"machine.topology=pack:4 numa:1 l3:1 core:8 pu:1", "nic.queues=4",
                                           "clients.count=32", "run.duration_ms=400", "run.warmup_ms=200"});
  const result& sync = o.at("rx-sync", 3);
  const result& normal = o.at("rx-not-sync", 3);
  EXPECT_GT(normal.transactions_per_s, sync.transactions_per_s * 1.03);
  // With sync wakeups node 0 is the busiest by far.
  const auto& s = sync.node_busy_pct;
  EXPECT_GT(s[0], 1.5 * *std::max_element(s.begin() + 1, s.end()));
  // The pull is the policy's: the sync shortcut fires only with rx_wakeup_sync.
  const auto shortcut = static_cast<std::size_t>(policy::wake_reason::affine_sync_waker);
  EXPECT_GT(sync.count.wake_reasons[shortcut], 0U);
  EXPECT_EQ(normal.count.wake_reasons[shortcut], 0U);
  // On the project's own ladder the same: without sync wakeups the nodes are even.
  const result& affine_sync = o.at("affine-rx-sync", 4);
  const result& affine_normal = o.at("affine-rx-not-sync", 4);
  EXPECT_GT(affine_normal.transactions_per_s, affine_sync.transactions_per_s * 1.03);
  const auto& n = affine_normal.node_busy_pct;
  EXPECT_LT(*std::ranges::max_element(n) - *std::ranges::min_element(n), 10.0);
}

TEST(seeds, seed_001_yielding_the_busy_poll_helps_from_two_sessions_on) {
  const test::outcome o = run("seed-001", {"run.duration_ms=100", "run.warmup_ms=20"});
  EXPECT_EQ(o.metric("yield-on", 1), o.metric("yield-off", 1));
  for (const std::int64_t sessions : {2, 16, 32, 64}) {
    EXPECT_GT(o.metric("yield-on", sessions), 1.3 * o.metric("yield-off", sessions)) << sessions << " sessions";
  }
  // Polling beats sleeping for one session (no interrupt, no idle exit).
  EXPECT_GT(o.metric("yield-on", 1), 1.3 * o.metric("busy-read-0", 1));
}

TEST(seeds, seed_003_rps_to_an_idle_core_beats_rps_by_hash_for_polling_consumers) {
  const test::outcome o = run("seed-003", {"run.duration_ms=200", "run.warmup_ms=50"});
  for (const std::int64_t llcs : {1, 2}) {
    EXPECT_GT(o.metric("idle", llcs), 1.02 * o.metric("hash", llcs)) << llcs << " LLCs";
  }
  // The steering is rps_target's: idle mode finds idle cores in the consumers' LLC.
  const auto& idle = o.at("idle", 2).count.rps_reasons;
  EXPECT_GT(idle[static_cast<std::size_t>(policy::rps_reason::idle_llc)], 0U);
  EXPECT_EQ(idle[static_cast<std::size_t>(policy::rps_reason::hash)], 0U);
}

TEST(seeds, seed_004_wake_affine_for_rx_wakers_pulls_the_flow_behind_a_hog) {
  // 2 x 8 cores; each variant keeps its hogs per core (x / 32 of them per node-1 core).
  const test::outcome o = test::run(
      "seed-004", {"machine.topology=pack:2 numa:1 l3:1 core:8 pu:1", "server.cores=0-7", "antagonists.cores=8-15",
                   "nic.queues=8", "run.duration_ms=300"},
      [](variant& v) { v.params.antagonists.count = static_cast<unsigned>(*v.x / 4); });
  EXPECT_GT(o.metric("always", 32), 20 * o.metric("task-only", 32));
  EXPECT_LT(o.metric("task-only", 32), 20.0);  // the seed's "under 20 us"
  // More hogs than cores: nr_running != 1 on the RX core, no pull (the seed's 64 and 96).
  EXPECT_LT(o.metric("always", 96), 1.2 * o.metric("task-only", 96));
  EXPECT_LT(o.metric("always", 64), 1.2 * o.metric("task-only", 64));
  // The kernel's tick-driven balancer moves the waiting qperf back: the ping-pong.
  const result& pingpong = o.at("always", 32);
  EXPECT_GT(pingpong.count.steals[static_cast<std::size_t>(domain_level::machine)], 0U);
  // The project's ladder, without CFS: the fix holds there too.
  EXPECT_GT(o.metric("affine-always", 32), 20 * o.metric("affine-task-only", 32));
}

}  // namespace
}  // namespace affine::sim
