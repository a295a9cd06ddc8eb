// The fiber API: spawn, join, yield order, sleep, fiber-local storage,
// exceptions, pinning, and the TLS rule of DESIGN.md section 4.

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "affine/log.hh"
#include "affine/runtime.hh"
#include "affine/sync.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {
namespace {

using fiber_api = runtime_test;

TEST_F(fiber_api, RunReturnsTheMainFibersResult) {
  EXPECT_EQ(rt_->run([] { return 42; }), 42);
}

TEST_F(fiber_api, SpawnAndJoinRunsEveryFiberOnce) {
  std::atomic<int> ran{0};
  rt_->run([&] {
    std::vector<fiber_handle> hs;
    for (int i = 0; i < 100; ++i) hs.push_back(spawn([&] { ran.fetch_add(1); }).value());
    for (auto& h : hs) h.join();
  });
  EXPECT_EQ(ran.load(), 100);
}

TEST_F(fiber_api, YieldRunsOtherFibersInFifoOrder) {
  std::vector<int> order;
  rt_->run([&] {
    std::vector<fiber_handle> hs;
    for (int i = 0; i < 3; ++i)
      hs.push_back(spawn([&order, i] {
        order.push_back(i);
        this_fiber::yield();
        order.push_back(10 + i);
      }, {.core = 0, .pinned = true}).value());
    for (auto& h : hs) h.join();
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 10, 11, 12}));
}

TEST_F(fiber_api, SleepNeverWakesEarly) {
  rt_->run([] {
    for (int i = 0; i < 20; ++i) {
      const std::uint64_t t0 = now_ns();
      this_fiber::sleep_for(std::chrono::microseconds(200));
      EXPECT_GE(now_ns() - t0, 200'000u);
    }
  });
}

TEST_F(fiber_api, ManySleepersWakeInDeadlineOrder) {
  std::vector<int> order;
  spinlock lock;
  rt_->run([&] {
    // One core, one start after every sleeper exists, and 5 ms for them all
    // to go to sleep: the order is the timer wheel's, whatever the load on
    // the machine or the sanitizer's slowness (sleepers on two cores, or
    // deadlines already past when a slow spawn got to them, could be
    // reordered).
    std::vector<fiber_handle> hs;
    event start;
    std::uint64_t t0 = 0;
    for (int i = 9; i >= 0; --i)
      hs.push_back(spawn([&, i] {
        start.wait();
        this_fiber::sleep_until(t0 + std::uint64_t(5 + 2 * i) * 1'000'000);
        lock.lock();
        order.push_back(i);
        lock.unlock();
      }, {.core = 0, .pinned = true}).value());
    t0 = now_ns();
    start.set();
    for (auto& h : hs) h.join();
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST_F(fiber_api, JoinRethrowsWhatTheFiberThrew) {
  rt_->run([] {
    auto h = spawn([] { throw std::runtime_error("boom"); }).value();
    EXPECT_THROW(h.join(), std::runtime_error);
  });
}

TEST_F(fiber_api, MainFiberExceptionReachesTheCaller) {
  EXPECT_THROW(rt_->run([] { throw std::invalid_argument("x"); }), std::invalid_argument);
}

struct counted {
  static inline std::atomic<int> alive{0};
  int v = 0;
  counted() { ++alive; }
  ~counted() { --alive; }
};

TEST_F(fiber_api, FiberLocalIsPerFiberAndDestroyedAtExit) {
  static fiber_local<counted> local;
  rt_->run([] {
    local->v = 1;
    auto h = spawn([] {
      EXPECT_EQ(local->v, 0);  // a fresh one
      local->v = 2;
      this_fiber::yield();
      EXPECT_EQ(local->v, 2);
    }).value();
    h.join();
    EXPECT_EQ(local->v, 1);
    EXPECT_EQ(counted::alive.load(), 1);  // the other fiber's died with it
  });
  // The main fiber's value dies when that fiber ends, just after run() returns.
  for (int i = 0; i < 1000 && counted::alive.load() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(counted::alive.load(), 0);
}

TEST_F(fiber_api, PinnedFiberNeverLeavesItsCore) {
  rt_->run([] {
    auto h = spawn([] {
      for (int i = 0; i < 1000; ++i) {
        EXPECT_EQ(this_fiber::core(), 1u);
        this_fiber::migrate(0);  // refused: pinned
        this_fiber::sleep_for(std::chrono::microseconds(5));
      }
    }, {.core = 1, .pinned = true}).value();
    h.join();
  });
}

TEST_F(fiber_api, SubmitToRunsOnTheNamedCore) {
  rt_->run([] {
    for (unsigned c = 0; c < 2; ++c) EXPECT_EQ(submit_to(c, [] { return this_fiber::core(); }), c);
  });
}

TEST_F(fiber_api, SpawnFromOutsideTheReactors) {
  std::atomic<bool> done{false};
  rt_->run([] {});
  {
    auto h = spawn([&] { done = true; }, {.core = 1}).value();
    h.detach();
  }
  for (int i = 0; i < 1000 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(done.load());
}

// DESIGN.md section 4: a fiber that migrates many times must always see the
// per-core state of the core it runs on, never a TLS address cached from
// before a switch. Built with optimisation (debugoptimized or release).
TEST_F(fiber_api, MigratingFiberAlwaysSeesItsOwnCore) {
  std::map<std::thread::id, unsigned> core_of_thread;
  std::mutex m;
  rt_->run([&] {
    for (unsigned c = 0; c < 2; ++c)
      submit_to(c, [&, c] {
        std::lock_guard g(m);
        core_of_thread[std::this_thread::get_id()] = c;
      });
    auto check = [&](unsigned expect) {
      EXPECT_EQ(this_fiber::core(), expect);
      EXPECT_EQ(log::thread_core(), int(expect));
      std::lock_guard g(m);
      EXPECT_EQ(core_of_thread.at(std::this_thread::get_id()), expect);
    };
    for (unsigned i = 0; i < 20000; ++i) {
      const unsigned to = i % 2;
      this_fiber::migrate(to);
      check(to);
      this_fiber::yield();  // a switch that may not move: still right
      check(this_fiber::core());
    }
  });
  const auto c0 = settled(0), c1 = settled(1);
  EXPECT_GE(c0.migrations + c1.migrations, 19999u);
}

TEST_F(fiber_api, MaybeYieldHonoursTheQuota) {
  std::atomic<bool> other_ran{false};
  rt_->run([&] {
    auto h = spawn([&] { other_ran = true; }, {.core = this_fiber::core(), .pinned = true}).value();
    // Spin well past the 500 us quota, offering to yield.
    const std::uint64_t end = now_ns() + 5'000'000;
    bool yielded = false;
    while (now_ns() < end && !other_ran) yielded = this_fiber::maybe_yield() || yielded;
    EXPECT_TRUE(yielded);
    EXPECT_TRUE(other_ran.load());
    h.join();
  });
}

TEST_F(fiber_api, QuotaOverrunIsCounted) {
  rt_->run([] {
    const std::uint64_t end = now_ns() + 3'000'000;  // 6x the quota, never yielding
    while (now_ns() < end) {
    }
  });
  EXPECT_GE(settled(0).quota_overruns + settled(1).quota_overruns, 1u);
}

}  // namespace
}  // namespace affine::test
