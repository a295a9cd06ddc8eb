// rps_target() reproducing seed 003 in miniature: 2 nodes x 2 LLCs x 4 cores
// (LLC 0 = cores 0-3, LLC 1 = 4-7 on node 0; LLC 2 = 8-11, LLC 3 = 12-15).

#include <gtest/gtest.h>

#include <set>

#include "reactor/policy/rps.hh"
#include "tests/policy/machine.hh"

namespace affine::policy {
namespace {

using testing::cpu;
using testing::grid;
using testing::machine;

constexpr std::uint32_t hash_first = 0;           // maps to the first of n
constexpr std::uint32_t hash_half = 0x8000'0000;  // maps to the middle of n
constexpr std::uint32_t hash_last = 0xffff'ffff;  // maps to the last of n

struct rps : ::testing::Test {
  machine m{grid(2, 2, 4)};
  policy_config cfg;
  rps() { m.run_all(0, 15, 1); }
  rps_choice target(std::optional<core_id> consumer, std::uint32_t hash, rps_mode mode) const {
    return rps_target(m.view(), cpu(0), consumer, hash, mode, cfg);
  }
};

TEST_F(rps, Seed003_OffKeepsBatchOnRxCore) {
  const rps_choice c = target(cpu(9), hash_half, rps_mode::off);
  EXPECT_EQ(c.core, cpu(0));
  EXPECT_EQ(c.reason, rps_reason::off);
}

TEST_F(rps, Seed003_HashIndexesTheReactorCoresLikeTheRpsMap) {
  m.drop_reactor(cpu(15));  // 15 reactor cores: 0-14
  EXPECT_EQ(target(cpu(9), hash_first, rps_mode::hash).core, cpu(0));
  EXPECT_EQ(target(cpu(9), hash_half, rps_mode::hash).core, cpu(7));
  EXPECT_EQ(target(cpu(9), hash_last, rps_mode::hash).core, cpu(14));
  EXPECT_EQ(target(cpu(9), hash_last, rps_mode::hash).reason, rps_reason::hash);
}

TEST_F(rps, Seed003_FlowFollowsTheConsumer) {
  const rps_choice c = target(cpu(9), hash_half, rps_mode::flow);
  EXPECT_EQ(c.core, cpu(9));
  EXPECT_EQ(c.reason, rps_reason::flow);
}

TEST_F(rps, Seed003_UnknownConsumerFallsBackToHash) {
  for (const rps_mode mode : {rps_mode::flow, rps_mode::idle}) {
    const rps_choice c = target(std::nullopt, hash_last, mode);
    EXPECT_EQ(c.core, cpu(15)) << to_string(mode);
    EXPECT_EQ(c.reason, rps_reason::no_consumer) << to_string(mode);
  }
}

TEST_F(rps, Seed003_IdlePrefersTheIdleConsumerItself) {
  m.run(cpu(9), 0);
  m.run(cpu(10), 0);
  const rps_choice c = target(cpu(9), hash_half, rps_mode::idle);
  EXPECT_EQ(c.core, cpu(9));
  EXPECT_EQ(c.reason, rps_reason::idle_consumer);
}

TEST_F(rps, Seed003_IdlePicksIdleCoreInConsumersLlcNeverOutside) {
  m.run_all(12, 15, 0);  // the neighbouring LLC on the same node is all idle
  m.run_all(4, 7, 0);    // so is one on the RX core's node
  m.run(cpu(11), 0);     // one idle core in the consumer's LLC
  for (std::uint32_t hash = 0; hash < 64; ++hash) {
    const rps_choice c = target(cpu(9), hash * 0x0400'0000u, rps_mode::idle);
    EXPECT_EQ(c.core, cpu(11)) << hash;
    EXPECT_EQ(c.reason, rps_reason::idle_llc) << hash;
  }
}

TEST_F(rps, Seed003_IdleFallsBackToConsumerWhenItsLlcHasNoIdleCore) {
  m.run_all(12, 15, 0);
  const rps_choice c = target(cpu(9), hash_half, rps_mode::idle);
  EXPECT_EQ(c.core, cpu(9));
  EXPECT_EQ(c.reason, rps_reason::idle_none);
}

TEST_F(rps, Seed003_IdleWithTwoLlcsOnANodeStaysInTheConsumersLlc) {
  m.run_all(4, 7, 0);  // LLC 1 idle: the consumer (core 2) is in LLC 0
  m.run(cpu(3), 0);
  EXPECT_EQ(target(cpu(2), hash_first, rps_mode::idle).core, cpu(3));
  m.run(cpu(3), 1);
  EXPECT_EQ(target(cpu(2), hash_first, rps_mode::idle).core, cpu(2));
}

TEST_F(rps, Seed003_IdleSpreadsFlowsOverTheLlcsIdleCores) {
  m.run_all(0, 3, 0);
  m.run(cpu(1), 1);  // the consumer is busy, cores 0, 2 and 3 idle
  std::set<std::uint32_t> picked;
  for (const std::uint32_t hash : {hash_first, hash_half, hash_last}) {
    picked.insert(target(cpu(1), hash, rps_mode::idle).core.value);
  }
  EXPECT_EQ(picked, (std::set<std::uint32_t>{0, 2, 3}));
}

TEST_F(rps, Seed003_IdleSkipsCoresBusyWithPackets) {
  // Eric Dumazet: a core spending most of its cycles on packets looks idle.
  m.run(cpu(10), 0);
  m.cores[10].rx_share = load_scale * 9 / 10;
  EXPECT_EQ(target(cpu(9), hash_half, rps_mode::idle).reason, rps_reason::idle_none);
  cfg.rps_idle_max_rx_share = load_scale;
  EXPECT_EQ(target(cpu(9), hash_half, rps_mode::idle).core, cpu(10));
}

TEST_F(rps, Seed003_HandoffDistanceIsMeasuredFromTheRxCore) {
  const sched_view v = m.view();
  EXPECT_EQ(handoff_distance(v, cpu(0), {cpu(0), rps_reason::off}), distance::same_core);
  EXPECT_EQ(handoff_distance(v, cpu(0), {cpu(3), rps_reason::flow}), distance::same_llc);
  EXPECT_EQ(handoff_distance(v, cpu(0), {cpu(5), rps_reason::flow}), distance::same_node);
  EXPECT_EQ(handoff_distance(v, cpu(0), {cpu(9), rps_reason::flow}), distance::remote_node);
}

}  // namespace
}  // namespace affine::policy
