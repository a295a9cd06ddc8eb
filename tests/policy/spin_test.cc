// spin_governor (reactor/policy/spin.hh): how long an idle reactor spins and
// a reader busy-polls when they adapt. Each rule has a test that fails
// without it.

#include <gtest/gtest.h>

#include "reactor/policy/busy_poll.hh"
#include "reactor/policy/spin.hh"

namespace affine::policy {
namespace {

constexpr std::uint64_t cap = 50'000;    // reactor.spin_us = 50
constexpr std::uint64_t sleep = 20'000;  // a sleep and wake cost 20 us here

// Waits that all ended long after a spin would have given up.
void stop_paying(spin_governor& g) {
  for (int i = 0; i < 40; ++i) {
    g.plan(cap, sleep, false);
    g.record(3 * sleep);
  }
  ASSERT_FALSE(g.paying());
}

TEST(spin, TheWindowIsTheCapOrWhatASleepCostsWhicheverIsLess_SkiRental) {
  spin_governor g;
  EXPECT_EQ(g.plan(cap, sleep, false), (spin_plan{sleep, spin_reason::paying}));
  EXPECT_EQ(g.plan(cap, 80'000, false), (spin_plan{cap, spin_reason::paying}));
  EXPECT_EQ(g.plan(0, sleep, false), (spin_plan{0, spin_reason::off}));
  EXPECT_EQ(g.plan(cap, 0, false), (spin_plan{0, spin_reason::off}));
}

TEST(spin, NobodySpinsWhileAnotherTaskWaitsForTheCpu_Seed001) {
  spin_governor g;
  // seed 001: nr_running_this_cpu() counts other processes too.
  EXPECT_EQ(g.plan(cap, sleep, true), (spin_plan{0, spin_reason::shared}));
  EXPECT_EQ(g.plan(cap, sleep, false).reason, spin_reason::paying);
}

TEST(spin, WaitsThatOutlastTheWindowStopTheSpin) {
  spin_governor g;
  int plans = 0;
  while (g.plan(cap, sleep, false).reason == spin_reason::paying) {
    g.record(3 * sleep);  // every wait ended long after a spin would have given up
    ASSERT_LT(++plans, 40) << "spins that never pay go on";
  }
  EXPECT_GE(plans, 8) << "one long wait is not a trend";
  EXPECT_FALSE(g.paying());
}

TEST(spin, ShortWaitsKeepTheSpinAndAFewStartItAgain) {
  spin_governor g;
  stop_paying(g);
  // Waits measured while sleeping count too: they say whether a spin would
  // have caught them.
  int hits = 0;
  while (g.plan(cap, sleep, false).reason != spin_reason::paying) {
    g.record(sleep / 4);
    ASSERT_LT(++hits, 8) << "short waits do not start the spin again";
  }
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(g.plan(cap, sleep, false).reason, spin_reason::paying);
    g.record(i % 3 == 0 ? 3 * sleep : sleep / 2);  // two in three short: it pays
  }
}

TEST(spin, AGovernorThatStoppedProbesOnceInProbeEvery) {
  spin_governor g;
  stop_paying(g);
  unsigned probes = 0, none = 0;
  for (unsigned i = 0; i < 4 * spin_governor::probe_every; ++i) {
    const spin_plan p = g.plan(cap, sleep, false);
    if (p.reason == spin_reason::probe) {
      ++probes;
      EXPECT_EQ(p.window_ns, sleep);
    } else {
      EXPECT_EQ(p, (spin_plan{0, spin_reason::not_paying}));
      ++none;
    }
    g.record(3 * sleep);
  }
  EXPECT_EQ(probes, 4u);
  EXPECT_EQ(none, 4 * spin_governor::probe_every - 4);
}

TEST(spin, AnAdaptivePollEndsWhenAnotherTaskWaitsForTheCpu_Seed001) {
  policy_config cfg;
  busy_poll_state st{.elapsed_ns = 1, .cpu_shared = true};
  EXPECT_EQ(busy_poll_continue(st, cfg).reason, poll_exit::shared);
  cfg.busy_poll_adaptive = false;  // the fixed budget ignores other processes, as before
  EXPECT_TRUE(busy_poll_continue(st, cfg).keep_polling);
}

TEST(spin, ReasonsHaveDistinctNames) {
  for (std::size_t a = 0; a < spin_reason_count; ++a)
    for (std::size_t b = a + 1; b < spin_reason_count; ++b)
      EXPECT_NE(to_string(spin_reason(a)), to_string(spin_reason(b)));
}

}  // namespace
}  // namespace affine::policy
