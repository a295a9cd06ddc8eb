// The balancer in the live reactor: an idle core steals waiting fibers
// (policy/balance.hh decides from where), pinned fibers never move.

#include <atomic>
#include <vector>

#include "affine/sync.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {
namespace {

using reactor_balance = runtime_test;

// CPU-bound fibers, all started on core 0, that offer the core back at
// every quota. Core 1 has been asleep in epoll all along: core 0's balance
// tick kicks it awake (the nohz idle-balance kick) and it steals some.
TEST_F(reactor_balance, SleepingCoreIsKickedAndStealsWaitingFibers) {
  std::atomic<unsigned> ran_on_1{0};
  const auto before = settled(1);
  rt_->run([&] { submit_to(0, [&] {
    std::vector<fiber_handle> hs;
    for (int i = 0; i < 16; ++i)
      hs.push_back(spawn([&] {
        const std::uint64_t end = now_ns() + 20'000'000;  // 20 ms of work each
        bool seen = false;
        while (now_ns() < end) {
          this_fiber::maybe_yield();
          if (!seen && this_fiber::core() == 1) {
            seen = true;
            ++ran_on_1;
          }
        }
      }, {.core = 0}));
    for (auto& h : hs) h.join();
  }); });
  EXPECT_GT(ran_on_1.load(), 0u);
  const auto c1 = settled(1);
  EXPECT_GT(c1.steals[0] + c1.steals[1] + c1.steals[2], 0u);
  EXPECT_GT(c1.sleeps, before.sleeps);
}

TEST_F(reactor_balance, PinnedFibersAreNeverStolen) {
  std::atomic<bool> moved{false};
  rt_->run([&] {
    std::vector<fiber_handle> hs;
    for (int i = 0; i < 8; ++i)
      hs.push_back(spawn([&] {
        const std::uint64_t end = now_ns() + 10'000'000;
        while (now_ns() < end) {
          this_fiber::maybe_yield();
          if (this_fiber::core() != 0) moved = true;
        }
      }, {.core = 0, .pinned = true}));
    for (auto& h : hs) h.join();
  });
  EXPECT_FALSE(moved.load());
  const auto c1 = settled(1);
  EXPECT_EQ(c1.steals[0] + c1.steals[1] + c1.steals[2], 0u);
}

TEST_F(reactor_balance, StealingOffKeepsEverythingHome) {
  rt_.reset();
  bool pinnable = false;
  const topology& topo = two_core_topology(&pinnable);
  runtime_options o;
  o.cores = {core_id{0}, core_id{1}};
  o.pin_threads = pinnable;
  policy::policy_config p;
  p.steal = false;
  auto rt = runtime::start(topo, o, &p);
  ASSERT_TRUE(rt.has_value()) << rt.error();
  rt_ = std::move(*rt);
  std::atomic<bool> moved{false};
  rt_->run([&] {
    std::vector<fiber_handle> hs;
    for (int i = 0; i < 8; ++i)
      hs.push_back(spawn([&] {
        const std::uint64_t end = now_ns() + 5'000'000;
        while (now_ns() < end) {
          this_fiber::maybe_yield();
          if (this_fiber::core() != 0) moved = true;
        }
      }, {.core = 0}));
    for (auto& h : hs) h.join();
  });
  EXPECT_FALSE(moved.load());
}

}  // namespace
}  // namespace affine::test
