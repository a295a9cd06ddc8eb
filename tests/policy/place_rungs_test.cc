// place_wakeup(), one rung at a time: pinning, the wake-affine ladder, the
// load comparison and the idle-sibling search. 2 nodes x 4 cores, one LLC per
// node, unless a case says otherwise.

#include <gtest/gtest.h>

#include "reactor/policy/place.hh"
#include "tests/policy/machine.hh"

namespace affine::policy {
namespace {

using testing::cpu;
using testing::grid;
using testing::machine;

struct place_rungs : ::testing::Test {
  machine m{grid(2, 1, 4)};
  policy_config cfg;
  placement place(const wakeup& w) const { return place_wakeup(m.view(), w, cfg); }
};

TEST_F(place_rungs, PinnedGoesToItsCoreEvenWhenBusy) {
  m.run(cpu(6), 5);
  const placement p =
      place({.wakee_prev_core = cpu(0), .waker_core = cpu(1), .sync = true, .pinned = cpu(6)});
  EXPECT_EQ(p.core, cpu(6));
  EXPECT_EQ(p.reason, wake_reason::pinned);
  EXPECT_FALSE(p.idle_sibling);
}

TEST_F(place_rungs, WakerOnPrevSkipsWakeAffineButStillSearchesIdleSibling) {
  m.run(cpu(2), 1);
  const placement p = place({.wakee_prev_core = cpu(2), .waker_core = cpu(2)});
  EXPECT_EQ(p.core, cpu(3));
  EXPECT_EQ(p.reason, wake_reason::waker_on_prev);
  EXPECT_TRUE(p.idle_sibling);
}

// A fiber that wakes its partner and then blocks (sync) hands its core over:
// no hop to an idle sibling, whose cost is a cross-core wakeup.
TEST_F(place_rungs, SyncWakerOnPrevHandsOverItsCore) {
  m.run(cpu(2), 1);
  const placement p = place({.wakee_prev_core = cpu(2), .waker_core = cpu(2), .sync = true});
  EXPECT_EQ(p.core, cpu(2));
  EXPECT_EQ(p.reason, wake_reason::affine_sync_waker);
  EXPECT_FALSE(p.idle_sibling);
}

TEST_F(place_rungs, SyncShortcutTargetIsNotTradedForAThirdCore) {
  m.run(cpu(1), 1);
  m.run(cpu(3), 2);  // prev busy: the idle cores 0 and 2 are not taken
  const placement p = place({.wakee_prev_core = cpu(3), .waker_core = cpu(1), .sync = true});
  EXPECT_EQ(p.core, cpu(1));
  EXPECT_EQ(p.reason, wake_reason::affine_sync_waker);
}

TEST_F(place_rungs, IdleWakerSharingLlcTakesWakeeWhenPrevBusy) {
  m.run(cpu(2), 2);
  const placement p = place({.wakee_prev_core = cpu(2), .waker_core = cpu(1), .kind = waker_kind::timer});
  EXPECT_EQ(p.core, cpu(1));
  EXPECT_EQ(p.reason, wake_reason::affine_idle_waker);
}

TEST_F(place_rungs, IdleWakerSharingLlcLeavesWakeeOnIdlePrev) {
  const placement p = place({.wakee_prev_core = cpu(2), .waker_core = cpu(1), .kind = waker_kind::timer});
  EXPECT_EQ(p.core, cpu(2));
  EXPECT_EQ(p.reason, wake_reason::affine_idle_waker);
}

TEST_F(place_rungs, IdleWakerOnOtherLlcWinsOnLoadNotOnCache) {
  // Kernel too: wake_affine_idle() passes (no shared cache), the load
  // comparison then prefers the empty core over waiting behind a fiber.
  m.run(cpu(5), 1);
  const placement p = place({.wakee_prev_core = cpu(5), .waker_core = cpu(1), .kind = waker_kind::timer});
  EXPECT_EQ(p.core, cpu(1));
  EXPECT_EQ(p.reason, wake_reason::affine_load_this);
}

TEST_F(place_rungs, LoadComparisonPullsToClearlyLighterWakerCore) {
  m.run_all(0, 7, 1);
  m.run(cpu(5), 2);
  const placement p = place({.wakee_prev_core = cpu(5), .waker_core = cpu(1), .kind = waker_kind::timer});
  EXPECT_EQ(p.core, cpu(1));
  EXPECT_EQ(p.reason, wake_reason::affine_load_this);
  EXPECT_FALSE(p.idle_sibling);
}

TEST_F(place_rungs, LoadComparisonKeepsPrevOnEqualLoad) {
  m.run_all(0, 7, 1);
  const placement p = place({.wakee_prev_core = cpu(5), .waker_core = cpu(1), .kind = waker_kind::timer});
  EXPECT_EQ(p.core, cpu(5));
  EXPECT_EQ(p.reason, wake_reason::affine_load_prev);
}

TEST_F(place_rungs, AllowanceKeepsWakeeOnPrevWhenWakerCoreIsOnlySlightlyLighter) {
  m.run_all(0, 7, 1);
  m.cores[1].load = 1000;  // 5% lighter than prev: inside the 8% allowance
  m.cores[5].load = 1050;
  const wakeup w{.wakee_prev_core = cpu(5), .waker_core = cpu(1), .kind = waker_kind::timer};
  EXPECT_EQ(place(w).reason, wake_reason::affine_load_prev);
  cfg.wake_affine_allowance_pct = 0;
  EXPECT_EQ(place(w).reason, wake_reason::affine_load_this);
}

TEST_F(place_rungs, WakeeLoadCountsAgainstWakerCoreAndForPrev) {
  m.run_all(0, 7, 1);
  m.run(cpu(5), 2);
  // Half a fiber of prev's load is the wakee itself: counted where it would
  // go and not where it was, both cores come out at 1.5 and it stays.
  const placement p = place(
      {.wakee_prev_core = cpu(5), .waker_core = cpu(1), .kind = waker_kind::timer, .wakee_load = load_scale / 2});
  EXPECT_EQ(p.reason, wake_reason::affine_load_prev);
}

TEST_F(place_rungs, SyncFiberWakerHeavierThanItsCoreLoadPulls) {
  m.run_all(0, 7, 1);
  m.run(cpu(1), 2);
  m.run(cpu(5), 2);
  const placement p = place(
      {.wakee_prev_core = cpu(5), .waker_core = cpu(1), .sync = true, .waker_load = 3 * load_scale});
  EXPECT_EQ(p.core, cpu(1));
  EXPECT_EQ(p.reason, wake_reason::affine_load_this);
}

TEST_F(place_rungs, SyncLetsEqualZeroLoadsStackOnWaker) {
  m.run_all(0, 7, 1);
  m.cores[1].load = 0;  // the waker's core has just become busy
  m.cores[5].load = 0;
  const wakeup w{.wakee_prev_core = cpu(5), .waker_core = cpu(1), .kind = waker_kind::timer, .waker_load = 0};
  EXPECT_EQ(place(w).reason, wake_reason::affine_load_prev);
  cfg.rx_wakeup_sync = true;
  EXPECT_EQ(place({.wakee_prev_core = cpu(5), .waker_core = cpu(1), .kind = waker_kind::rx_path, .sync = true,
                   .waker_load = 0})
                .reason,
            wake_reason::affine_load_this);
}

TEST_F(place_rungs, IdleSiblingPrefersIdlePrevInTargetsLlc) {
  m.run(cpu(1), 1);
  m.run(cpu(2), 1);
  // The sync shortcut picks core 1; prev (core 3) is idle beside it.
  const placement p = place({.wakee_prev_core = cpu(3), .waker_core = cpu(1), .sync = true});
  EXPECT_EQ(p.reason, wake_reason::affine_sync_waker);
  EXPECT_EQ(p.core, cpu(3));
  EXPECT_TRUE(p.idle_sibling);
}

TEST_F(place_rungs, IdleSiblingScansFromTargetPlusOne) {
  m.run_all(4, 7, 1);
  m.run(cpu(1), 1);
  m.run(cpu(2), 1);
  m.run(cpu(5), 3);  // prev loaded: the load comparison picks the waker's core 1
  // Cores 0 and 3 idle; the scan from core 1 reaches 3 before wrapping to 0.
  const placement p = place({.wakee_prev_core = cpu(5), .waker_core = cpu(1)});
  EXPECT_EQ(p.reason, wake_reason::affine_load_this);
  EXPECT_EQ(p.core, cpu(3));
  EXPECT_TRUE(p.idle_sibling);
}

TEST_F(place_rungs, IdleSiblingScanWrapsAround) {
  m.run_all(4, 7, 1);
  m.run_all(1, 3, 1);
  m.run(cpu(5), 3);  // prev loaded: the load comparison picks the waker's core 2
  const placement p = place({.wakee_prev_core = cpu(5), .waker_core = cpu(2)});
  EXPECT_EQ(p.reason, wake_reason::affine_load_this);
  EXPECT_EQ(p.core, cpu(0));
  EXPECT_TRUE(p.idle_sibling);
}

TEST_F(place_rungs, IdleSiblingNeverLeavesTargetsLlc) {
  m.run_all(0, 3, 1);
  m.run(cpu(5), 1);
  const placement p = place({.wakee_prev_core = cpu(5), .waker_core = cpu(2), .sync = true});
  EXPECT_EQ(p.core, cpu(2));
  EXPECT_FALSE(p.idle_sibling);
}

TEST_F(place_rungs, IdleSiblingSkipsCoresWithoutReactor) {
  m.run_all(0, 7, 1);
  m.drop_reactor(cpu(3));
  const placement p = place({.wakee_prev_core = cpu(5), .waker_core = cpu(2), .sync = true});
  EXPECT_EQ(p.core, cpu(2));
  EXPECT_FALSE(p.idle_sibling);
}

}  // namespace
}  // namespace affine::policy
