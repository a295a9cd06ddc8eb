// The balancer in the live reactor: an idle core steals waiting fibers
// (policy/balance.hh decides from where), pinned fibers never move.

#include <atomic>
#include <vector>

#include "affine/sync.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {
namespace {

using reactor_balance = runtime_test;

// `n` CPU-bound fibers started on core 0, each working `ns` and offering
// the core back at every quota; returns how many of them ever ran elsewhere.
// Precondition: in a fiber.
unsigned run_hogs_from_core0(unsigned n, std::uint64_t ns, bool pinned) {
  std::atomic<unsigned> moved{0};
  std::vector<fiber_handle> hs;
  for (unsigned i = 0; i < n; ++i)
    hs.push_back(spawn([&] {
      const std::uint64_t end = now_ns() + ns;
      bool away = false;
      while (now_ns() < end) {
        this_fiber::maybe_yield();
        away = away || this_fiber::core() != 0;
      }
      if (away) ++moved;
    }, {.core = 0, .pinned = pinned}).value());
  for (auto& h : hs) h.join();
  return moved.load();
}

std::uint64_t steals(const core_counters& c) { return c.steals[0] + c.steals[1] + c.steals[2]; }

// Core 1 has been asleep in epoll all along: core 0's balance tick kicks it
// awake (the nohz idle-balance kick) and it steals some of the hogs.
TEST_F(reactor_balance, SleepingCoreIsKickedAndStealsWaitingFibers) {
  const auto before = settled(1);
  const unsigned moved = rt_->run([] { return submit_to(0, [] { return run_hogs_from_core0(16, 20'000'000, false); }); });
  EXPECT_GT(moved, 0u);
  const auto c1 = settled(1);
  EXPECT_GT(steals(c1), 0u);
  EXPECT_GT(c1.sleeps, before.sleeps);
}

// Everything on core 0 is pinned, the fiber that starts the hogs too (the
// run() fiber is not, and may be taken while it waits on core 0's queue):
// core 1 takes nothing.
TEST_F(reactor_balance, PinnedFibersAreNeverStolen) {
  EXPECT_EQ(rt_->run([] { return submit_to(0, [] { return run_hogs_from_core0(8, 10'000'000, true); }); }), 0u);
  EXPECT_EQ(steals(settled(1)), 0u);
}

TEST_F(reactor_balance, StealingOffKeepsEverythingHome) {
  rt_.reset();
  policy::policy_config p;
  p.steal = false;
  start({}, &p);
  EXPECT_EQ(rt_->run([] { return submit_to(0, [] { return run_hogs_from_core0(8, 5'000'000, false); }); }), 0u);
}

}  // namespace
}  // namespace affine::test
