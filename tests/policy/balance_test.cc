// steal_from(): the domain walk outward, the thresholds per level, and the
// choice of victim. 2 nodes x 2 LLCs x 4 cores; the thief is core 0
// (LLC 0 = cores 0-3, node 0 = cores 0-7).

#include <gtest/gtest.h>

#include "reactor/policy/balance.hh"
#include "tests/policy/machine.hh"

namespace affine::policy {
namespace {

using testing::cpu;
using testing::grid;
using testing::machine;

struct steal : ::testing::Test {
  machine m{grid(2, 2, 4)};
  policy_config cfg;
  std::optional<steal_choice> from(core_id thief) const { return steal_from(m.view(), thief, cfg); }
};

void expect_victim(const std::optional<steal_choice>& s, core_id victim, domain_level level) {
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->victim, victim);
  EXPECT_EQ(s->level, level) << to_string(s->level);
}

TEST_F(steal, PrefersVictimInSameLlcOverBusierOneOnAnotherNode) {
  m.run(cpu(2), 2);
  m.run(cpu(12), 10);
  expect_victim(from(cpu(0)), cpu(2), domain_level::llc);
}

TEST_F(steal, GoesToNodeOnlyWhenLlcHasNothingToGive) {
  m.run(cpu(2), 1);
  m.run(cpu(5), 3);
  m.run(cpu(12), 10);
  expect_victim(from(cpu(0)), cpu(5), domain_level::node);
}

TEST_F(steal, GoesToMachineOnlyWhenNodeHasNothingToGive) {
  m.run(cpu(2), 1);
  m.run(cpu(5), 2);
  m.run(cpu(12), 4);
  expect_victim(from(cpu(0)), cpu(12), domain_level::machine);
}

TEST_F(steal, RespectsEachLevelsThreshold) {
  m.run(cpu(2), 1);   // llc needs 2
  m.run(cpu(5), 2);   // node needs 3
  m.run(cpu(12), 3);  // machine needs 4
  EXPECT_FALSE(from(cpu(0)).has_value());
  cfg.steal_min_imbalance = {2, 3, 3};
  expect_victim(from(cpu(0)), cpu(12), domain_level::machine);
}

TEST_F(steal, DisabledNeverSteals) {
  m.run(cpu(1), 8);
  m.run(cpu(12), 8);
  cfg.steal = false;
  EXPECT_FALSE(from(cpu(0)).has_value());
}

TEST_F(steal, TiesGoToHigherLoadThenLowestId) {
  m.run_all(1, 3, 2);
  expect_victim(from(cpu(0)), cpu(1), domain_level::llc);
  m.cores[2].load = 3000;
  m.cores[3].load = 3000;
  expect_victim(from(cpu(0)), cpu(2), domain_level::llc);
}

TEST_F(steal, PeriodicBalanceMeasuresImbalanceAgainstThiefsOwnRunnable) {
  m.run(cpu(0), 1);
  m.run(cpu(2), 2);
  EXPECT_FALSE(from(cpu(0)).has_value());  // moving one would only swap places
  m.run(cpu(2), 3);
  expect_victim(from(cpu(0)), cpu(2), domain_level::llc);
}

TEST_F(steal, NeverPicksTheThiefItself) {
  m.run(cpu(0), 9);
  EXPECT_FALSE(from(cpu(0)).has_value());
}

TEST_F(steal, ThiefInAnotherLlcWalksItsOwnDomains) {
  m.run(cpu(1), 3);   // node 0, LLC 0
  m.run(cpu(13), 2);  // the thief's own LLC
  expect_victim(from(cpu(14)), cpu(13), domain_level::llc);
}

TEST(steal_large, StealsWithinTheNodeOn128CoreSyntheticMachine) {
  auto topo = topology::from_synthetic("pack:4 numa:1 l3:8 core:4 pu:1");
  ASSERT_TRUE(topo.has_value()) << topo.error();
  ASSERT_EQ(topo->core_count(), 128u);
  machine m{std::move(*topo)};
  m.run_all(0, 127, 1);
  m.run(cpu(0), 0);
  m.run(cpu(9), 3);    // node 0, another LLC
  m.run(cpu(100), 9);  // node 3
  const std::optional<steal_choice> s = steal_from(m.view(), cpu(0), policy_config{});
  expect_victim(s, cpu(9), domain_level::node);
}

}  // namespace
}  // namespace affine::policy
