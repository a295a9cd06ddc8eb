// The wake-affine knobs on the live stack (seeds 000 and 004): where a fiber
// woken by stack input on another core is placed, read from the reactors'
// placement counters (core_counters::placements by policy::wake_reason).
// Asserted on counters, not timings.
//
// The runtime sees a synthetic topology of two cores in two LLCs (hwloc's
// HWLOC_SYNTHETIC, honoured by topology::from_system): on this machine's one
// LLC an idle waker core always decides first (rung 5, affine_idle_waker) and
// the idle-sibling search sends a pulled fiber back to an idle prev, so the
// seed-004 shortcut could be counted but would never move anything.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>

#include "affine/config.hh"
#include "affine/fiber.hh"
#include "affine/net.hh"
#include "affine/sync.hh"
#include "reactor/core.hh"
#include "tests/stack/two_stacks.hh"

namespace affine::stack {
namespace {

using policy::wake_reason;
using testing::b_ip;

constexpr std::uint64_t io_timeout_ns = 10'000'000'000;
constexpr int round_trips = 200;
constexpr int wake_rounds = 20;

struct placement_counts {
  std::array<std::uint64_t, policy::wake_reason_count> by_reason{};
  std::uint64_t of(wake_reason r) const { return by_reason[std::size_t(r)]; }
  std::uint64_t total() const {
    std::uint64_t n = 0;
    for (auto v : by_reason) n += v;
    return n;
  }
};

// Reactor `core`'s own placement counters, exact (read on that core, not
// the published copy). Precondition: called from a fiber pinned on another
// core, so that the join of the reading fiber is not itself a placement.
placement_counts placements_on(unsigned core) {
  placement_counts p;
  const affine::core_counters c = submit_to(core, [] { return detail::this_core()->c; });
  for (std::size_t r = 0; r < policy::wake_reason_count; ++r) p.by_reason[r] = c.placements[r];
  return p;
}

placement_counts operator-(const placement_counts& after, const placement_counts& before) {
  placement_counts d;
  for (std::size_t r = 0; r < policy::wake_reason_count; ++r) d.by_reason[r] = after.by_reason[r] - before.by_reason[r];
  return d;
}

class wakeup_policy : public testing::two_stacks {
 protected:
  void start_on_two_llcs(policy::policy_config p) {
    // Busy polling would let the reader take the RX queue itself: no RX-path
    // wakeup at all (seed 001, tested in busy_poll_test.cc).
    p.busy_poll_budget_ns = 0;
    // The balancer must not move the fibers whose placement is counted.
    p.steal = false;
    ::setenv("HWLOC_SYNTHETIC", "pack:2 l3:1 core:1 pu:1", 1);
    start(p);
    ::unsetenv("HWLOC_SYNTHETIC");
    ASSERT_EQ(cores_, 2u);
    ASSERT_FALSE(topo_->share_llc(core_id{0}, core_id{1}));
  }

  // Round trips of 64 bytes from a client on stack a (RX queue on core 0,
  // the client pinned there, so its own wakeups are never placed) to an echo
  // server on stack b, whose RX queue is core 1's. Before each read the
  // server moves back to core 0: every request wakes it from core 1's RX
  // path with prev = core 0, while a fiber pinned on core 1 is always
  // runnable there: seed 004's antagonist, the one task on the NIC's CPU.
  // Returns the placements counted on core 1 during the round trips.
  placement_counts rx_wakeups(const policy::policy_config& p) {
    start_on_two_llcs(p);
    placement_counts out;
    if (HasFatalFailure()) return out;
    run({}, [&](stack& a, stack& b) {
      auto l = b.backend().listen({.local = {net::any_address, 7}});
      ASSERT_TRUE(l.has_value());
      net::tcp_listener listener(std::move(*l));
      auto server = spawn([&] {
        auto c = listener.accept(now_ns() + io_timeout_ns);
        ASSERT_TRUE(c.has_value());
        std::array<std::byte, 64> buf;
        for (;;) {
          this_fiber::migrate(0);
          if (!c->read_exactly(buf, now_ns() + io_timeout_ns)) break;
          if (!c->write(buf, now_ns() + io_timeout_ns)) break;
        }
      }, {.core = 0}).value();
      auto client = spawn([&] {
        auto c = a.backend().connect({net::ipv4_address{b_ip}, 7}, now_ns() + io_timeout_ns, {});
        ASSERT_TRUE(c.has_value()) << c.error().message();
        net::tcp_stream s(std::move(*c));
        std::array<std::byte, 64> req{}, resp{};
        const auto trip = [&] {
          ASSERT_TRUE(s.write(req, now_ns() + io_timeout_ns).has_value());
          ASSERT_TRUE(s.read_exactly(resp, now_ns() + io_timeout_ns).has_value());
        };
        trip();  // the accept and the connection's first wakeups are not counted
        event stop_hog;
        auto hog = spawn([&] { while (!stop_hog.is_set()) this_fiber::yield(); }, {.core = 1, .pinned = true}).value();
        const placement_counts before = placements_on(1);
        for (int i = 0; i < round_trips; ++i) trip();
        out = placements_on(1) - before;
        stop_hog.set();
        hog.join();
      }, {.core = 0, .pinned = true}).value();
      client.join();
      listener.close();
      server.join();
    });
    return out;
  }

  // A fiber pinned on core 1, alone there, wakes a fiber that last ran on
  // core 0, wake_rounds times: `wait(i)` blocks the wakee of round i, `wake(i)`
  // wakes it. Returns the placements counted on core 1.
  template <class Wait, class Wake>
  placement_counts fiber_wakeups(const policy::policy_config& p, Wait wait, Wake wake) {
    start_on_two_llcs(p);
    placement_counts out;
    if (HasFatalFailure()) return out;
    rt_->run([&] {
      auto driver = spawn([&] {
        const placement_counts before = placements_on(1);
        for (int i = 0; i < wake_rounds; ++i) {
          std::atomic<bool> waiting{false};
          auto wakee = spawn([&] {
            waiting = true;
            wait(i);
          }, {.core = 0}).value();
          submit_to(1, [&] {
            while (!waiting.load()) this_fiber::yield();
            // A fiber woken while still parking is queued by its own core
            // without a placement: give it time to be off its core. A round
            // that loses the race counts nothing, so only the reasons of
            // what was counted are asserted.
            this_fiber::sleep_for(std::chrono::milliseconds(1));
            wake(i);
          });
          wakee.join();
        }
        out = placements_on(1) - before;
      }, {.core = 0, .pinned = true}).value();
      driver.join();
    });
    return out;
  }
};

policy::policy_config with(policy::wake_affine_mode mode, bool rx_wakeup_sync) {
  policy::policy_config p;
  p.wake_affine = mode;
  p.rx_wakeup_sync = rx_wakeup_sync;
  return p;
}

// The kernel before seed 004: an RX wakeup that counts as sync pulls the
// reader onto the antagonist's core, the waker's core "running one task".
TEST_F(wakeup_policy, AlwaysLetsTheRxPathTakeTheSyncShortcut_Seed004) {
  const placement_counts c = rx_wakeups(with(policy::wake_affine_mode::always, true));
  EXPECT_GT(c.of(wake_reason::affine_sync_waker), 0u);
}

TEST_F(wakeup_policy, TaskOnlyNeverGivesTheSyncShortcutToTheRxPath_Seed004) {
  const placement_counts c = rx_wakeups(with(policy::wake_affine_mode::task_only, true));
  EXPECT_GT(c.total(), 0u);
  EXPECT_EQ(c.of(wake_reason::affine_sync_waker), 0u);
}

TEST_F(wakeup_policy, OffNeverPullsAnRxWakeupTowardsTheWaker) {
  const placement_counts c = rx_wakeups(with(policy::wake_affine_mode::off, true));
  EXPECT_GT(c.of(wake_reason::no_affine), 0u);
  EXPECT_EQ(c.of(wake_reason::no_affine), c.total());  // no affine_* reason at all
}

// Seed 000: the picture above without the RX path's sync hint honoured:
// the shortcut is never taken, whatever wake_affine says.
TEST_F(wakeup_policy, WithoutRxWakeupSyncTheRxPathIsNeverASyncWaker_Seed000) {
  const placement_counts c = rx_wakeups(with(policy::wake_affine_mode::always, false));
  EXPECT_GT(c.total(), 0u);
  EXPECT_EQ(c.of(wake_reason::affine_sync_waker), 0u);
}

// Seed 004 keeps the shortcut for fiber wakers: a fiber alone on its core
// that wakes another with the sync hint (as a fiber's end wakes its joiners)
// hands its core over, under the default task-only.
TEST_F(wakeup_policy, ASyncFiberWakerStillTakesTheShortcutUnderTaskOnly_Seed004) {
  spinlock lock;
  wait_queue q;
  const placement_counts c = fiber_wakeups(
      with(policy::wake_affine_mode::task_only, false),
      [&](int) {
        lock.lock();
        (void)q.wait(lock);
      },
      [&](int) {
        lock.lock();
        q.notify_one(/*sync=*/true);
        lock.unlock();
      });
  EXPECT_GT(c.of(wake_reason::affine_sync_waker), 0u);
  EXPECT_EQ(c.of(wake_reason::affine_sync_waker), c.total());
}

// affine::event (and channel) wakeups are fiber wakeups without the sync
// hint: even under `always` they never take the shortcut.
TEST_F(wakeup_policy, AnEventWakeupIsAFiberWakeupWithoutTheSyncHint) {
  std::array<event, wake_rounds> events;
  const placement_counts c = fiber_wakeups(
      with(policy::wake_affine_mode::always, true), [&](int i) { (void)events[std::size_t(i)].wait(); },
      [&](int i) { events[std::size_t(i)].set(); });
  EXPECT_GT(c.total(), 0u);
  EXPECT_EQ(c.of(wake_reason::affine_sync_waker), 0u);
}

// Bad values of the knobs not covered by tests/base: the exact error line.
TEST(wakeup_policy_config, ANegativePerQueueBusyPollBudgetIsOutOfRange) {
  auto s = config::load_string(config_schema(), "[[port]]\nip = \"10.77.0.2/24\"\n[[port.rxq]]\nqueue = 0\n"
                                                "busy_poll_budget_us = -2\n", "affine.toml");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error(), "affine.toml:5: port[0].rxq[0].busy_poll_budget_us: -2 is out of range (allowed: -1..100000)");
}

TEST(wakeup_policy_config, RxWakeupSyncMustBeABoolean) {
  auto s = config::load_string(config_schema(), "[sched]\nrx_wakeup_sync = \"yes\"\n", "affine.toml");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error(), "affine.toml:2: sched.rx_wakeup_sync: expected a boolean, got a string");
}

}  // namespace
}  // namespace affine::stack
