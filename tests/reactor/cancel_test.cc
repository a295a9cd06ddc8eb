// Cancellation (affine/fiber.hh): a stop request on the token a fiber
// follows ends every blocking call it waits in with operation_canceled, at
// once; a call made after the request ends at once too; mutex::lock and
// waits with stop_mode::ignore wait on; stop_scope changes the token for a
// while; spawned fibers inherit it. Also spawn's errors, as values.
//
// Each "released" case parks a fiber on core 0 in the call, with a 30 s
// deadline, and requests the stop from core 1 (or from a thread outside the
// reactors) once it has parked; the release latency of every case is
// printed (the figure docs/api.md quotes), and only checked against a bound
// far from the deadline: the machine's load is not the code's.

// GCC 12 (-Og with ASan) takes std::stop_source's constructor, which hands
// *this to a member that does not read it, for a read of uninitialized
// memory: a false -Wmaybe-uninitialized in <stop_token>.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "affine/channel.hh"
#include "affine/poller.hh"
#include "affine/sync.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {
namespace {

using namespace std::chrono_literals;
using cancel_api = runtime_test;

const std::error_code canceled = std::make_error_code(std::errc::operation_canceled);

template <class E>
std::error_code code_of(const std::expected<E, std::error_code>& r) {
  return r ? std::error_code{} : r.error();
}

std::vector<std::uint64_t>& latencies() {
  static std::vector<std::uint64_t> all;
  return all;
}

enum class from { other_core, foreign_thread };

// Runs `call` in a fiber on core 0 that follows a token of the test's, and
// requests the stop once the fiber has parked in it. Returns what the call
// returned; records how long after the request it came back.
std::error_code released_by_stop(const std::string& what, std::function<std::error_code()> call,
                                 from who = from::other_core) {
  std::stop_source src;
  std::atomic<bool> started{false};
  std::atomic<std::uint64_t> back_ns{0};
  std::error_code got;
  auto waiter = spawn(
                    [&] {
                      started = true;
                      got = call();
                      back_ns = now_ns();
                    },
                    {.core = 0, .pinned = true, .stop = src.get_token()})
                    .value();
  std::uint64_t asked_ns = 0;
  auto stopper = [&] {
    while (!started) this_fiber::yield();
    this_fiber::sleep_for(20ms);  // parked by now (and if not: then it is asked before the call)
    EXPECT_EQ(back_ns.load(), 0u) << what << " returned before the stop";
    asked_ns = now_ns();
    src.request_stop();
  };
  if (who == from::other_core) {
    spawn(stopper, {.core = 1, .pinned = true}).value().join();
  } else {
    while (!started) this_fiber::yield();
    this_fiber::sleep_for(20ms);
    std::thread t([&] {
      asked_ns = now_ns();
      src.request_stop();
    });
    t.join();
  }
  waiter.join();
  const std::uint64_t took = back_ns - asked_ns;
  latencies().push_back(took);
  std::printf("released %-34s in %6.1f us\n", what.c_str(), double(took) / 1e3);
  EXPECT_LT(took, 1'000'000'000u) << what << ": released near its deadline, not by the stop";
  return got;
}

TEST_F(cancel_api, ASleepIsReleased) {
  rt_->run([] {
    EXPECT_EQ(released_by_stop("sleep_for", [] { return code_of(this_fiber::sleep_for(30s)); }), canceled);
  });
}

TEST_F(cancel_api, AStopFromOutsideTheReactorsReleasesToo) {
  rt_->run([] {
    EXPECT_EQ(released_by_stop("sleep_for (stop from a thread)", [] { return code_of(this_fiber::sleep_for(30s)); },
                               from::foreign_thread),
              canceled);
  });
}

TEST_F(cancel_api, AJoinIsReleasedAndTheHandleStaysJoinable) {
  rt_->run([] {
    event go;
    // Its own token: the stop of the joiner is not its stop.
    auto worker = spawn([&] { (void)go.wait(30s); }, {.core = 1, .stop = std::stop_token{}}).value();
    EXPECT_EQ(released_by_stop("join", [&] { return code_of(worker.join()); }), canceled);
    EXPECT_TRUE(worker.joinable());
    go.set();
    EXPECT_TRUE(worker.join().has_value());
  });
}

TEST_F(cancel_api, SyncWaitsAreReleased) {
  rt_->run([] {
    event e;
    EXPECT_EQ(released_by_stop("event::wait", [&] { return code_of(e.wait(30s)); }), canceled);
    semaphore s;
    EXPECT_EQ(released_by_stop("semaphore::acquire", [&] { return code_of(s.acquire(30s)); }), canceled);
    EXPECT_EQ(s.available(), 0u);
    EXPECT_TRUE(s.try_acquire() == false);
    mutex m;
    condition_variable cv;
    bool relocked = false;
    EXPECT_EQ(released_by_stop("condition_variable::wait",
                               [&] {
                                 m.lock();
                                 auto r = cv.wait(m, 30s);
                                 relocked = !m.try_lock();  // held again by this fiber
                                 m.unlock();
                                 return code_of(r);
                               }),
              canceled);
    EXPECT_TRUE(relocked) << "cv::wait returns with the mutex locked, also on a stop";
    m.lock();
    EXPECT_EQ(released_by_stop("mutex::lock_until", [&] { return code_of(m.lock_until(30s)); }), canceled);
    m.unlock();
    EXPECT_TRUE(m.try_lock()) << "a cancelled lock_until holds nothing";
    m.unlock();
    event a, b;
    EXPECT_EQ(released_by_stop("wait_any(events)", [&] { return code_of(wait_any({&a, &b}, 30s)); }), canceled);
    // Nothing stale: the events still work for the next waiter.
    b.set();
    EXPECT_EQ(wait_any({&a, &b}, 1s).value(), 1u);
  });
}

TEST_F(cancel_api, ChannelOpsAreReleasedAndLoseNothing) {
  rt_->run([] {
    channel<int> ch(1);
    std::error_code dummy;
    EXPECT_EQ(released_by_stop("channel::recv",
                               [&] {
                                 auto r = ch.recv(30s);
                                 return r || r.error() != recv_error::canceled ? dummy : canceled;
                               }),
              canceled);
    ASSERT_EQ(ch.send(1), send_result::ok);
    EXPECT_EQ(released_by_stop("channel::send", [&] { return ch.send(2, 30s) == send_result::canceled ? canceled : dummy; }),
              canceled);
    EXPECT_EQ(ch.size(), 1u);
    EXPECT_EQ(ch.recv(1s).value(), 1) << "the queued value stays";
    EXPECT_EQ(ch.try_recv().error(), recv_error::empty);
  });
}

TEST_F(cancel_api, ACallAfterTheStopEndsAtOnce) {
  rt_->run([] {
    std::stop_source src;
    src.request_stop();
    spawn(
        [] {
          EXPECT_TRUE(this_fiber::stop_requested());
          const std::uint64_t t0 = now_ns();
          EXPECT_EQ(code_of(this_fiber::sleep_for(30s)), canceled);
          event e;
          EXPECT_EQ(code_of(e.wait(30s)), canceled);
          semaphore s;
          EXPECT_EQ(code_of(s.acquire()), canceled);
          channel<int> ch(1);
          EXPECT_EQ(ch.recv().error(), recv_error::canceled);
          // What is there is still taken: only a wait is cancelled.
          s.release();
          EXPECT_TRUE(s.acquire().has_value());
          e.set();
          EXPECT_TRUE(e.wait().has_value());
          EXPECT_LT(now_ns() - t0, 1'000'000'000u);
        },
        {.stop = src.get_token()})
        .value()
        .join(stop_mode::ignore);
  });
}

TEST_F(cancel_api, MutexLockIsNotCancelled) {
  rt_->run([] {
    mutex m;
    m.lock();
    std::stop_source src;
    std::atomic<bool> got{false};
    auto locker = spawn(
                      [&] {
                        m.lock();
                        got = true;
                        m.unlock();
                      },
                      {.core = 1, .stop = src.get_token()})
                      .value();
    this_fiber::sleep_for(10ms);
    src.request_stop();
    this_fiber::sleep_for(10ms);
    EXPECT_FALSE(got) << "mutex::lock gave up on a stop";
    m.unlock();
    locker.join();
    EXPECT_TRUE(got);
  });
}

// The waits that guard a destructor: event::wait(stop_mode::ignore), and
// runtime::remove_poller, which must not return (its caller then frees the
// poller) before the poller is off its reactor, stop or no stop.
TEST_F(cancel_api, UncancellableWaitsWaitOnAfterAStop) {
  struct watched_poller final : poller {
    std::atomic<bool> gone{false};  // its owner has let it go
    std::atomic<std::uint64_t> turns{0}, turns_after_gone{0};
    unsigned poll() override {
      turns.fetch_add(1, std::memory_order_relaxed);
      if (gone.load()) turns_after_gone.fetch_add(1, std::memory_order_relaxed);
      return 0;
    }
  };
  rt_->run([this] {
    std::stop_source src;
    src.request_stop();
    event e;
    std::atomic<bool> set{false};
    auto setter = spawn(
                      [&] {
                        this_fiber::sleep_for(20ms);
                        set = true;
                        e.set();
                      },
                      {.core = 1, .stop = std::stop_token{}})
                      .value();
    watched_poller p;
    this_fiber::stop_scope stopped{src.get_token()};
    EXPECT_TRUE(e.wait({}, stop_mode::ignore).has_value());
    EXPECT_TRUE(set) << "event::wait(stop_mode::ignore) returned before set()";
    EXPECT_EQ(code_of(e.wait(30s)), std::error_code{}) << "a set event is no stop";
    setter.join(stop_mode::ignore);
    rt_->add_poller(1, &p);
    while (p.turns.load() == 0) std::this_thread::sleep_for(1ms);
    // Core 1 busy for 50 ms: the removal waits in its inbox meanwhile.
    std::atomic<bool> busy{false};
    auto blocker = spawn(
                       [&] {
                         busy = true;
                         std::this_thread::sleep_for(50ms);
                       },
                       {.core = 1, .pinned = true, .stop = std::stop_token{}})
                       .value();
    while (!busy) std::this_thread::sleep_for(1ms);
    rt_->remove_poller(1, &p);
    p.gone = true;
    blocker.join(stop_mode::ignore);
    std::this_thread::sleep_for(20ms);  // core 1 turns many times meanwhile
    EXPECT_EQ(p.turns_after_gone.load(), 0u) << "remove_poller returned with the poller still polled";
  });
}

TEST_F(cancel_api, SpawnedFibersInheritTheToken) {
  rt_->run([] {
    std::stop_source src;
    std::error_code child_got;
    auto parent = spawn(
                      [&] {
                        auto child = spawn([&] { child_got = code_of(this_fiber::sleep_for(30s)); }, {.core = 1}).value();
                        // Its own: not stopped with the parent's.
                        auto other = spawn([] { EXPECT_FALSE(this_fiber::stop_requested()); },
                                           {.stop = std::stop_token{}})
                                         .value();
                        child.join(stop_mode::ignore);
                        other.join(stop_mode::ignore);
                      },
                      {.stop = src.get_token()})
                      .value();
    this_fiber::sleep_for(20ms);
    src.request_stop();
    parent.join();
    EXPECT_EQ(child_got, canceled);
  });
}

TEST_F(cancel_api, AStopScopeShieldsAndThenRestores) {
  rt_->run([] {
    std::stop_source src;
    src.request_stop();
    spawn(
        [] {
          {
            this_fiber::stop_scope shield{std::stop_token{}};
            EXPECT_FALSE(this_fiber::stop_requested());
            EXPECT_TRUE(this_fiber::sleep_for(5ms).has_value()) << "the shield let the stop through";
            std::stop_source inner;
            {
              this_fiber::stop_scope nested{inner.get_token()};
              inner.request_stop();
              EXPECT_EQ(code_of(this_fiber::sleep_for(30s)), canceled);
            }
            EXPECT_FALSE(this_fiber::stop_requested());
          }
          EXPECT_TRUE(this_fiber::stop_requested());
          EXPECT_EQ(code_of(this_fiber::sleep_for(30s)), canceled);
        },
        {.stop = src.get_token()})
        .value()
        .join(stop_mode::ignore);
  });
}

// Many stops, some racing the park: none lost (each sleep ends long before
// its 30 s), none leaking into a later park (a second sleep in the same
// fiber, with its own token, runs its full 1 ms).
TEST_F(cancel_api, StopsRacingTheParkAreNeverLost) {
  rt_->run([] {
    for (int i = 0; i < 300; ++i) {
      std::stop_source src;
      std::error_code first;
      bool second_full = false;
      auto f = spawn(
                   [&] {
                     first = code_of(this_fiber::sleep_for(30s));
                     this_fiber::stop_scope fresh{std::stop_token{}};
                     const std::uint64_t t0 = now_ns();
                     second_full = this_fiber::sleep_for(1ms).has_value() && now_ns() - t0 >= 1'000'000;
                   },
                   {.core = unsigned(i % 2), .stop = src.get_token()})
                   .value();
      if (i % 3 == 0) this_fiber::yield();
      src.request_stop();
      f.join();
      ASSERT_EQ(first, canceled) << "round " << i;
      ASSERT_TRUE(second_full) << "round " << i;
    }
  });
}

TEST_F(cancel_api, ReleaseLatencies) {
  rt_->run([] {
    for (int i = 0; i < 50; ++i)
      (void)released_by_stop("sleep_for (loop)", [] { return code_of(this_fiber::sleep_for(30s)); });
  });
  auto l = latencies();
  ASSERT_FALSE(l.empty());
  std::sort(l.begin(), l.end());
  std::printf("{\"test\":\"cancel_release_latency\",\"count\":%zu,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n",
              l.size(), double(l[l.size() / 2]) / 1e3, double(l[l.size() * 99 / 100]) / 1e3, double(l.back()) / 1e3);
}

TEST_F(cancel_api, SpawnReportsABadCoreAsAValue) {
  rt_->run([] {
    auto f = spawn([] { ADD_FAILURE() << "ran"; }, {.core = 7});
    ASSERT_FALSE(f.has_value());
    EXPECT_EQ(f.error(), std::errc::invalid_argument);
  });
}

TEST(spawn_errors, NoRuntimeIsAValue) {
  auto f = spawn([] { ADD_FAILURE() << "ran"; });
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error(), std::errc::operation_not_permitted);
}

// Stacks larger than the address space: no stack can be had.
class spawn_without_stacks : public runtime_test {
 protected:
  void SetUp() override {
    runtime_options o;
    o.stack_bytes = std::size_t(1) << 50;
    start(std::move(o));
  }
};

TEST_F(spawn_without_stacks, NoStackIsAValueFromAThreadOutside) {
  auto f = spawn([] { ADD_FAILURE() << "ran"; }, {.core = 1});
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error(), std::errc::not_enough_memory);
}

}  // namespace
}  // namespace affine::test
