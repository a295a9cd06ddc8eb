// cpu_share_monitor's rule at virtual time (reactor/cpu_share.hh): what a
// reactor's run-queue waits say about whether another task wants its CPU.
// Each step is one sample as schedstat would give it: how long the thread
// waited over how long a period, and how many times it got the CPU. The
// live effect, with real processes beside a reactor, is in
// adaptive_idle_test.cc.

#include <gtest/gtest.h>

#include <cstdint>

#include "reactor/cpu_share.hh"

namespace affine::detail {
namespace {

constexpr std::uint64_t us = 1'000, ms = 1'000'000;

// A monitor fed samples by hand, the clock starting at 1 s.
struct clocked_monitor {
  cpu_share_monitor m;
  std::uint64_t now = 1'000 * ms;

  // One sample: `waited` out of the `period` just gone, over `times` runs.
  bool sample(std::uint64_t period, std::uint64_t waited, std::uint64_t times = 20) {
    now += period;
    m.account(now, period, waited, times);
    return m.shared_now();
  }
  // `n` samples of 1 ms with no wait: a CPU of its own.
  bool quiet(int n) {
    bool shared = false;
    for (int i = 0; i < n; ++i) shared = sample(ms, 0);
    return shared;
  }
};

TEST(cpu_share, TheWaitsOfWakeupsFromIdleAreNoOnesDoing) {
  clocked_monitor c;
  // A reactor that naps 100,000 times a second: 100 wakeups a
  // millisecond, 0.25 us each on the run queue, 2.5 % of the time.
  for (int i = 0; i < 1'000; ++i) ASSERT_FALSE(c.sample(ms, 100 * 250, 100)) << "sample " << i;
  EXPECT_EQ(c.m.shared_samples(), 0u);
  EXPECT_EQ(c.m.waited_ns(), 1'000u * 100 * 250);
}

TEST(cpu_share, OneShortBurstDoesNotMakeTheCpuShared) {
  clocked_monitor c;
  c.quiet(10);
  EXPECT_FALSE(c.sample(ms, 440 * us, 3)) << "one burst of 440 us, a kdamond pass";
  EXPECT_FALSE(c.quiet(50));
  EXPECT_EQ(c.m.shared_samples(), 0u);
}

TEST(cpu_share, OneBurstSplitOverTwoSamplesMakesItSharedForTwoSamplesOnly) {
  clocked_monitor c;
  EXPECT_FALSE(c.sample(ms, 600 * us, 2));
  EXPECT_TRUE(c.sample(ms, 600 * us, 2)) << "two samples of one burst";
  EXPECT_TRUE(c.sample(ms, 0));
  EXPECT_FALSE(c.sample(ms, 0)) << "two samples on";
  EXPECT_FALSE(c.quiet(50));
  EXPECT_EQ(c.m.shared_samples(), 2u);
}

TEST(cpu_share, ThreeSamplesOfWaitsInARowAreCompany) {
  clocked_monitor c;
  for (int i = 0; i < 3; ++i) c.sample(ms, 600 * us, 2);
  EXPECT_TRUE(c.quiet(3)) << "shared some samples after";
}

TEST(cpu_share, WaitsPeriodAfterPeriodMakeTheCpuShared) {
  clocked_monitor c;
  // A process beside the reactor that runs 100 us of every millisecond, in
  // pieces of 20 us: MariaDB beside the proxy's reactor.
  int first_shared = -1;
  for (int i = 0; i < 20 && first_shared < 0; ++i)
    if (c.sample(ms, 100 * us, 5)) first_shared = i;
  EXPECT_GE(first_shared, 0) << "a tenth of every millisecond, twenty times over";
  EXPECT_LE(first_shared, 3);
}

TEST(cpu_share, ALoneWaitOfAWholeSliceDoesNotMakeTheCpuShared) {
  clocked_monitor c;
  c.quiet(10);
  // kdamond here: 1.2 ms, a few times a second.
  EXPECT_FALSE(c.sample(2'200 * us, 1'200 * us, 1));
  EXPECT_FALSE(c.quiet(300));
  EXPECT_FALSE(c.sample(2'200 * us, 1'200 * us, 1)) << "another 300 ms later";
  EXPECT_FALSE(c.quiet(300));
  EXPECT_EQ(c.m.shared_samples(), 0u);
}

TEST(cpu_share, SlicesThatComeBackAreATaskThatWantsTheCpu) {
  clocked_monitor c;
  c.quiet(10);
  // A busy process: the reactor runs some 8 ms, then waits a slice of 2-3 ms.
  EXPECT_FALSE(c.sample(3 * ms, 2'500 * us, 1)) << "the first slice could be a lone one";
  c.quiet(8);
  EXPECT_TRUE(c.sample(3 * ms, 2'500 * us, 1)) << "a second within slice_recur_ns";
  // It stays shared between the slices, and some while after the last.
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(c.sample(ms, 0)) << "round " << round << ", sample " << i;
    ASSERT_TRUE(c.sample(3 * ms, 2'500 * us, 1));
  }
  EXPECT_TRUE(c.quiet(10)) << "10 ms after the process is gone";
  EXPECT_FALSE(c.quiet(30)) << "40 ms after";
}

TEST(cpu_share, ASliceAmidOtherWaitsCountsInFull) {
  clocked_monitor c;
  // MariaDB and sysbench beside the proxy's reactor: waits in most periods,
  // and now and then a whole slice, farther apart than slice_recur_ns.
  for (int i = 0; i < 5; ++i) c.sample(ms, 300 * us, 10);
  ASSERT_TRUE(c.m.shared_now());
  EXPECT_TRUE(c.sample(3 * ms, 2'500 * us, 1));
  EXPECT_TRUE(c.quiet(14)) << "the slice counted in full: shared some while after the company has gone";
}

TEST(cpu_share, SlicesFartherApartThanARecurrenceAreEachALoneOne) {
  clocked_monitor c;
  for (int i = 0; i < 20; ++i) {
    ASSERT_FALSE(c.sample(3 * ms, 1'500 * us, 1)) << "slice " << i;
    c.quiet(int(cpu_share_monitor::slice_recur_ns / ms) + 5);
  }
  EXPECT_EQ(c.m.shared_samples(), 0u);
}

}  // namespace
}  // namespace affine::detail
