#include "reactor/timer_wheel.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <vector>

namespace affine {
namespace {

constexpr time_ns us = 1'000;
constexpr time_ns ms = 1'000'000;
constexpr time_ns hour = 3'600'000'000'000;
constexpr time_ns tick = time_ns{1} << timer_wheel::default_tick_shift;

time_ns round_up(time_ns t, time_ns res) { return (t + res - 1) / res * res; }

// A timer that records its firings into a shared log. Its `on_fire` hook lets
// a test make the callback arm or cancel other timers.
struct probe;
struct fire_log {
  timer_wheel* wheel = nullptr;
  time_ns now = 0;  // what the test passed to the advance() in progress
  std::vector<const probe*> order;
};

struct probe {
  probe() = default;
  probe(fire_log& l, int i) : log(&l), id(i) {}

  static void fire(timer& self, void* context) {
    auto& p = *static_cast<probe*>(context);
    EXPECT_EQ(&self, &p.t);
    ++p.fired;
    p.fired_at = p.log->now;
    p.log->order.push_back(&p);
    if (p.on_fire) p.on_fire(p);
  }

  fire_log* log = nullptr;
  int id = 0;
  int fired = 0;
  time_ns fired_at = 0;
  void (*on_fire)(probe&) = nullptr;
  probe* peer = nullptr;  // what on_fire acts on
  time_ns period = 0;
  timer t{&probe::fire, this};
};

class timer_wheel_test : public ::testing::Test {
 protected:
  // Every test leaves the wheel empty: a timer still armed is a leak.
  void TearDown() override { EXPECT_EQ(wheel.size(), 0U); }

  std::size_t advance_to(time_ns now) {
    log.now = now;
    return wheel.advance(now);
  }
  std::vector<int> fired_ids() const {
    std::vector<int> ids;
    for (const probe* p : log.order) ids.push_back(p->id);
    return ids;
  }

  timer_wheel wheel;
  fire_log log{.wheel = &wheel, .now = 0, .order = {}};
};

TEST_F(timer_wheel_test, FiresAtRoundedUpTickNeverEarly) {
  probe p{log, 1};
  wheel.arm(p.t, 5000);  // ticks are 1024 ns: fires from 5120 on
  EXPECT_TRUE(wheel.armed(p.t));
  EXPECT_EQ(wheel.next_deadline(), std::optional<time_ns>{5 * tick});
  EXPECT_EQ(advance_to(4999), 0U);
  EXPECT_EQ(advance_to(5119), 0U);
  EXPECT_EQ(advance_to(5120), 1U);
  EXPECT_EQ(p.fired, 1);
  EXPECT_FALSE(wheel.armed(p.t));
  EXPECT_EQ(wheel.next_deadline(), std::nullopt);
}

TEST_F(timer_wheel_test, ExpiryOnTickBoundaryFiresExactlyThen) {
  probe p{log, 1};
  wheel.arm(p.t, 4 * tick);
  EXPECT_EQ(advance_to(4 * tick - 1), 0U);
  EXPECT_EQ(advance_to(4 * tick), 1U);
}

TEST_F(timer_wheel_test, OverdueTimerFiresAtNextAdvanceWithSameNow) {
  advance_to(10 * ms);
  probe p{log, 1};
  wheel.arm(p.t, 3 * ms);
  EXPECT_LE(*wheel.next_deadline(), 10 * ms);
  EXPECT_EQ(advance_to(10 * ms), 1U);
}

TEST_F(timer_wheel_test, ClockGoingBackwardsFiresNothingAndKeepsDeadlines) {
  probe a{log, 1}, b{log, 2};
  advance_to(2 * hour);
  wheel.arm(a.t, 2 * hour + 10 * us);  // level 0
  wheel.arm(b.t, 3 * hour);
  EXPECT_EQ(advance_to(1 * hour), 0U);
  EXPECT_EQ(advance_to(1 * hour + 1 * ms), 0U);
  EXPECT_EQ(wheel.next_deadline(), round_up(2 * hour + 10 * us, tick));
  EXPECT_EQ(advance_to(round_up(2 * hour + 10 * us, tick)), 1U);
  EXPECT_EQ(advance_to(3 * hour), 1U);
  EXPECT_EQ(fired_ids(), (std::vector<int>{1, 2}));
}

TEST_F(timer_wheel_test, FiresInExpiryOrderAcrossLevels) {
  // One timer per level distance, armed out of order, fired by one advance.
  const std::vector<time_ns> expiries = {5 * hour, 3 * us, 70 * ms, 90 * us, 2 * ms, 40 * hour, 4 * tick, 8 * ms};
  std::vector<std::unique_ptr<probe>> probes;
  for (std::size_t i = 0; i < expiries.size(); ++i) {
    probes.push_back(std::make_unique<probe>(log, static_cast<int>(i)));
    wheel.arm(probes.back()->t, expiries[i]);
  }
  EXPECT_EQ(advance_to(41 * hour), expiries.size());
  EXPECT_EQ(fired_ids(), (std::vector<int>{1, 6, 3, 4, 7, 2, 0, 5}));
}

TEST_F(timer_wheel_test, SameExpiryFiresInArmingOrder) {
  probe a{log, 1}, b{log, 2}, c{log, 3};
  wheel.arm(b.t, 3 * ms);
  wheel.arm(a.t, 3 * ms);
  wheel.arm(c.t, 3 * ms);
  EXPECT_EQ(advance_to(3 * ms + tick), 3U);
  EXPECT_EQ(fired_ids(), (std::vector<int>{2, 1, 3}));
}

TEST_F(timer_wheel_test, CancelBeforeFirePreventsIt) {
  probe a{log, 1}, b{log, 2};
  wheel.arm(a.t, 100 * us);
  wheel.arm(b.t, 200 * us);
  EXPECT_TRUE(wheel.cancel(a.t));
  EXPECT_FALSE(wheel.cancel(a.t));
  EXPECT_EQ(wheel.size(), 1U);
  EXPECT_EQ(wheel.next_deadline(), round_up(200 * us, tick));
  EXPECT_EQ(advance_to(1 * ms), 1U);
  EXPECT_EQ(a.fired, 0);
  EXPECT_EQ(b.fired, 1);
}

TEST_F(timer_wheel_test, CancelInFarLevel) {
  probe far{log, 1}, near{log, 2};
  wheel.arm(far.t, 7 * hour);
  wheel.arm(near.t, 30 * ms);
  EXPECT_TRUE(wheel.cancel(far.t));
  EXPECT_EQ(wheel.next_deadline(), round_up(30 * ms, tick));
  EXPECT_EQ(advance_to(8 * hour), 1U);
  EXPECT_EQ(far.fired, 0);
  EXPECT_EQ(wheel.next_deadline(), std::nullopt);
}

TEST_F(timer_wheel_test, RearmMovesTheExpiry) {
  probe p{log, 1};
  wheel.arm(p.t, 5 * ms);
  wheel.rearm(p.t, 9 * ms);
  EXPECT_EQ(p.t.expiry(), 9 * ms);
  EXPECT_EQ(advance_to(8 * ms), 0U);
  EXPECT_EQ(advance_to(round_up(9 * ms, tick)), 1U);
  wheel.rearm(p.t, 10 * ms);  // re-arming a disarmed timer just arms it
  EXPECT_EQ(advance_to(round_up(10 * ms, tick)), 1U);
}

void rearm_periodic(probe& p) { p.log->wheel->arm(p.t, p.t.expiry() + p.period); }

TEST_F(timer_wheel_test, PeriodicTimerRearmsInItsCallback) {
  probe p{log, 1};
  p.period = 1000 * tick;
  p.on_fire = rearm_periodic;
  wheel.arm(p.t, p.period);
  for (time_ns now = 0; now <= 20 * p.period; now += p.period / 4) advance_to(now);
  EXPECT_EQ(p.fired, 20);
  EXPECT_EQ(p.fired_at, 20 * p.period);
  EXPECT_TRUE(wheel.cancel(p.t));
}

TEST_F(timer_wheel_test, PeriodicTimerCatchesUpWithinOneAdvance) {
  probe p{log, 1};
  p.period = 1000 * tick;
  p.on_fire = rearm_periodic;
  wheel.arm(p.t, p.period);
  EXPECT_EQ(advance_to(20 * p.period), 20U);
  EXPECT_EQ(p.t.expiry(), 21 * p.period);
  EXPECT_TRUE(wheel.cancel(p.t));
}

TEST_F(timer_wheel_test, SelfRearmIntoThePastFiresOncePerAdvance) {
  // Re-armed for its own (already fired) tick: placing it back would fire it
  // again in the same advance(), forever.
  // It gives up after 10 firings, so that the bug fails the test instead of
  // hanging it.
  probe p{log, 1};
  p.on_fire = [](probe& self) {
    if (self.fired < 10) self.log->wheel->arm(self.t, self.t.expiry());
  };
  wheel.arm(p.t, 1 * ms);
  EXPECT_EQ(advance_to(1 * hour), 1U);
  EXPECT_EQ(advance_to(1 * hour), 1U);
  EXPECT_EQ(wheel.next_deadline(), std::optional<time_ns>{1 * hour / tick * tick});
  EXPECT_TRUE(wheel.cancel(p.t));
}

TEST_F(timer_wheel_test, CallbackArmingLaterDueTimerFiresInSameAdvanceInOrder) {
  probe a{log, 1}, b{log, 2}, c{log, 3};
  a.peer = &b;
  a.on_fire = [](probe& self) { self.log->wheel->arm(self.peer->t, 2 * ms); };
  wheel.arm(a.t, 1 * ms);
  wheel.arm(c.t, 3 * ms);
  EXPECT_EQ(advance_to(5 * ms), 3U);
  EXPECT_EQ(fired_ids(), (std::vector<int>{1, 2, 3}));
}

TEST_F(timer_wheel_test, CallbackCancelsAnotherDueTimerInSameAdvance) {
  probe a{log, 1}, b{log, 2}, c{log, 3};
  a.peer = &b;
  a.on_fire = [](probe& self) { EXPECT_TRUE(self.log->wheel->cancel(self.peer->t)); };
  wheel.arm(a.t, 1 * ms);
  wheel.arm(b.t, 1 * ms);  // same slot as a, right behind it
  wheel.arm(c.t, 2 * ms);
  EXPECT_EQ(advance_to(5 * ms), 2U);
  EXPECT_EQ(fired_ids(), (std::vector<int>{1, 3}));
  EXPECT_EQ(b.fired, 0);
}

TEST_F(timer_wheel_test, CallbackCancelsATimerAnotherCallbackArmedOverdue) {
  probe a{log, 1}, b{log, 2}, c{log, 3};
  a.peer = &c;
  a.on_fire = [](probe& self) { self.log->wheel->arm(self.peer->t, 0); };
  b.peer = &c;
  b.on_fire = [](probe& self) { EXPECT_TRUE(self.log->wheel->cancel(self.peer->t)); };
  wheel.arm(a.t, 1 * ms);
  wheel.arm(b.t, 2 * ms);
  EXPECT_EQ(advance_to(5 * ms), 2U);
  EXPECT_EQ(advance_to(5 * ms), 0U);
  EXPECT_EQ(c.fired, 0);
  EXPECT_EQ(wheel.next_deadline(), std::nullopt);
}

TEST_F(timer_wheel_test, BudgetLeavesTheRestForTheNextAdvance) {
  probe p[4] = {{log, 0}, {log, 1}, {log, 2}, {log, 3}};
  for (int i = 0; i < 4; ++i) wheel.arm(p[i].t, static_cast<time_ns>(4 - i) * ms);
  log.now = 10 * ms;
  EXPECT_EQ(wheel.advance(10 * ms, 3), 3U);
  EXPECT_EQ(fired_ids(), (std::vector<int>{3, 2, 1}));
  EXPECT_EQ(wheel.next_deadline(), round_up(4 * ms, tick));
  EXPECT_EQ(wheel.advance(10 * ms, 3), 1U);
  EXPECT_EQ(p[0].fired, 1);
}

TEST_F(timer_wheel_test, HugeExpiryHoursAwayFiresOnTime) {
  probe p{log, 1};
  const time_ns expiry = 13 * hour + 17 * ms + 5;
  wheel.arm(p.t, expiry);
  EXPECT_EQ(wheel.next_deadline(), round_up(expiry, tick));
  // Walk there in 7-minute steps (each cascading a level down when crossed).
  time_ns now = 0;
  while (now + 7 * 60'000 * ms < expiry) {
    now += 7 * 60'000 * ms;
    EXPECT_EQ(advance_to(now), 0U);
    EXPECT_EQ(wheel.next_deadline(), round_up(expiry, tick));
  }
  EXPECT_EQ(advance_to(round_up(expiry, tick) - 1), 0U);
  EXPECT_EQ(advance_to(round_up(expiry, tick)), 1U);
}

TEST_F(timer_wheel_test, ExpiryNearTheEndOfTimeWorks) {
  timer_wheel late{std::numeric_limits<time_ns>::max() - 10 * hour};
  probe p{log, 1};
  const time_ns expiry = std::numeric_limits<time_ns>::max() - 3 * hour;
  late.arm(p.t, expiry);
  EXPECT_EQ(late.next_deadline(), round_up(expiry, tick));
  EXPECT_EQ(late.advance(expiry - 1), 0U);
  EXPECT_EQ(late.advance(round_up(expiry, tick)), 1U);
  EXPECT_EQ(late.size(), 0U);
}

TEST_F(timer_wheel_test, NanosecondTicksSpanTheWholeRange) {
  // With 1 ns ticks the top levels (bits 54..63) are used too.
  constexpr time_ns end = std::numeric_limits<time_ns>::max();
  timer_wheel exact{0, 0};
  probe p[4] = {{log, 0}, {log, 1}, {log, 2}, {log, 3}};
  const time_ns expiries[] = {end, (time_ns{1} << 63) + 12345, 1000, end - 1};
  for (int i = 0; i < 4; ++i) exact.arm(p[i].t, expiries[i]);
  const time_ns steps[] = {999, 1000, time_ns{1} << 62, (time_ns{1} << 63) + 12344, (time_ns{1} << 63) + 12345,
                           end - 2, end - 1, end};
  const std::size_t fires[] = {0, 1, 0, 0, 1, 0, 1, 1};
  for (int i = 0; i < 8; ++i) {
    log.now = steps[i];
    EXPECT_EQ(exact.advance(steps[i]), fires[i]) << "advance to " << steps[i];
    std::optional<time_ns> earliest;
    for (const probe& q : p) {
      if (exact.armed(q.t)) earliest = std::min(earliest.value_or(end), q.t.expiry());
    }
    EXPECT_EQ(exact.next_deadline(), earliest);
  }
  EXPECT_EQ(fired_ids(), (std::vector<int>{2, 1, 3, 0}));
}

TEST_F(timer_wheel_test, OneHugeTimeJumpFiresEverythingInOrder) {
  std::vector<std::unique_ptr<probe>> probes;
  std::mt19937_64 rng{7};
  for (int i = 0; i < 2000; ++i) {
    probes.push_back(std::make_unique<probe>(log, i));
    wheel.arm(probes.back()->t, rng() % (100 * hour));
  }
  EXPECT_EQ(advance_to(101 * hour), probes.size());
  for (std::size_t i = 1; i < log.order.size(); ++i) {
    EXPECT_LE(round_up(log.order[i - 1]->t.expiry(), tick), round_up(log.order[i]->t.expiry(), tick));
  }
}

TEST_F(timer_wheel_test, ResolutionIsConfigurable) {
  timer_wheel exact{0, 0};
  probe p{log, 1};
  exact.arm(p.t, 1001);
  EXPECT_EQ(exact.resolution(), 1U);
  EXPECT_EQ(exact.next_deadline(), std::optional<time_ns>{1001});
  EXPECT_EQ(exact.advance(1000), 0U);
  EXPECT_EQ(exact.advance(1001), 1U);

  timer_wheel coarse{0, 20};
  coarse.arm(p.t, 1);
  EXPECT_EQ(coarse.next_deadline(), std::optional<time_ns>{1 << 20});
  EXPECT_EQ(coarse.advance((1 << 20) - 1), 0U);
  EXPECT_EQ(coarse.advance(1 << 20), 1U);
}

TEST_F(timer_wheel_test, RandomTimersFireOnceNeverEarlyInOrder) {
  // 100,000 timers from 0 to about 3 hours ahead, walked through with random
  // steps (40 us at most for the first 200 ms, then 40 s); some cancelled
  // along the way.
  constexpr std::size_t count = 100'000;
  auto probes = std::make_unique<probe[]>(count);
  std::mt19937_64 rng{12345};
  time_ns horizon = 0;
  for (std::size_t i = 0; i < count; ++i) {
    probes[i].log = &log;
    const unsigned scale = static_cast<unsigned>(rng() % 4);  // us, ms, seconds, hours
    const time_ns spans[] = {100 * us, 100 * ms, 100'000 * ms, 3 * hour};
    wheel.arm(probes[i].t, rng() % spans[scale]);
    horizon = std::max(horizon, probes[i].t.expiry());
  }
  std::vector<bool> cancelled(count);
  time_ns now = 0;
  std::optional<time_ns> before;  // the previous advance's now; none before the first
  std::size_t fired = 0;
  while (wheel.size() > 0) {
    now += rng() % (now < 200 * ms ? 40 * us : 40'000 * ms);
    const std::size_t victim = rng() % count;
    if (rng() % 8 == 0 && wheel.cancel(probes[victim].t)) cancelled[victim] = true;
    const std::size_t already = log.order.size();
    fired += advance_to(now);
    for (std::size_t k = already; k < log.order.size(); ++k) {
      const time_ns due = round_up(log.order[k]->t.expiry(), tick);
      ASSERT_LE(due, now) << "fired early";
      if (before) {
        ASSERT_GT(due, *before) << "did not fire at the first advance past its tick";
      }
      if (k > 0) {
        ASSERT_LE(round_up(log.order[k - 1]->t.expiry(), tick), due) << "out of order";
      }
    }
    before = now;
  }
  EXPECT_GE(now, horizon);
  EXPECT_EQ(fired, log.order.size());
  for (std::size_t i = 0; i < count; ++i) {
    ASSERT_EQ(probes[i].fired, cancelled[i] ? 0 : 1) << "timer " << i;
  }
}

TEST_F(timer_wheel_test, NextDeadlineMatchesBruteForceModel) {
  // The model: the deadline is the smallest round_up(expiry), but never before
  // the current tick (an overdue timer fires at the next advance).
  constexpr std::size_t count = 300;
  auto probes = std::make_unique<probe[]>(count);
  std::mt19937_64 rng{99};
  time_ns now = 5 * hour;  // start away from 0 so that epochs are crossed
  timer_wheel w{now};
  log.wheel = &w;
  for (int step = 0; step < 20'000; ++step) {
    auto& p = probes[rng() % count];
    p.log = &log;
    switch (rng() % 4) {
      case 0:
      case 1: {
        const time_ns spans[] = {50 * us, 10 * ms, 5'000 * ms, 2 * hour};
        const time_ns ahead = rng() % spans[rng() % 4];
        w.rearm(p.t, rng() % 16 == 0 ? now - ahead % now : now + ahead);
        break;
      }
      case 2:
        w.cancel(p.t);
        break;
      default:
        now += rng() % (rng() % 2 ? 100 * us : 1'000 * ms);
        log.now = now;
        w.advance(now);
    }
    std::optional<time_ns> model;
    for (std::size_t i = 0; i < count; ++i) {
      if (!w.armed(probes[i].t)) continue;
      const time_ns due = std::max(round_up(probes[i].t.expiry(), tick), now / tick * tick);
      model = std::min(model.value_or(due), due);
    }
    ASSERT_EQ(w.next_deadline(), model) << "step " << step;
  }
  for (std::size_t i = 0; i < count; ++i) w.cancel(probes[i].t);
  EXPECT_EQ(w.size(), 0U);
}

TEST_F(timer_wheel_test, ArmedCountReturnsToZero) {
  probe a{log, 1}, b{log, 2}, c{log, 3};
  wheel.arm(a.t, 1 * ms);
  wheel.arm(b.t, 1 * hour);
  wheel.arm(c.t, 0);
  EXPECT_EQ(wheel.size(), 3U);
  wheel.cancel(b.t);
  EXPECT_EQ(wheel.size(), 2U);
  EXPECT_EQ(advance_to(round_up(1 * ms, tick)), 2U);
  EXPECT_EQ(wheel.size(), 0U);
}

using timer_wheel_death_test = timer_wheel_test;

TEST_F(timer_wheel_death_test, DestroyingAnArmedTimerAsserts) {
  EXPECT_DEBUG_DEATH(
      {
        timer_wheel w;
        probe p(log, 1);
        w.arm(p.t, 1 * ms);
      },
      "timer destroyed while armed");
}

TEST_F(timer_wheel_death_test, DestroyingAWheelWithArmedTimersAsserts) {
  EXPECT_DEBUG_DEATH(
      {
        probe p(log, 1);
        timer_wheel w;
        w.arm(p.t, 1 * ms);
      },
      "timer_wheel destroyed with armed timers");
}

}  // namespace
}  // namespace affine
