// Deadlines as std::chrono types (include/affine/time.hh): a duration is that
// long from now, a steady_clock time point is taken on the reactor clock's
// epoch, raw now_ns() nanoseconds still work, and every blocking call of the
// API takes any of them.

#include <chrono>
#include <cstdint>

#include <gtest/gtest.h>

#include "affine/channel.hh"
#include "affine/fiber.hh"
#include "affine/sync.hh"
#include "affine/time.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {
namespace {

using namespace std::chrono_literals;

std::int64_t diff(std::uint64_t a, std::uint64_t b) { return std::int64_t(a - b); }

TEST(deadline, ADurationIsThatLongFromNow) {
  const std::uint64_t before = now_ns();
  const deadline d = 100ms;
  const std::uint64_t after = now_ns();
  EXPECT_GE(diff(d.ns(), before), 100'000'000);
  EXPECT_LE(diff(d.ns(), after), 100'000'000);
}

TEST(deadline, ZeroOrNegativeIsAlreadyPassed) {
  const std::uint64_t before = now_ns();
  const deadline zero = 0ms, negative = -5s;
  EXPECT_LE(diff(before, zero.ns()), 0);
  EXPECT_LE(diff(zero.ns(), now_ns()), 0);
  EXPECT_LE(diff(negative.ns(), now_ns()), 0);
  EXPECT_GE(diff(negative.ns(), before), 0);
}

TEST(deadline, AHugeTimeoutIsNoDeadline) {
  EXPECT_TRUE(deadline(std::chrono::hours::max()).never());
  EXPECT_TRUE(deadline(std::chrono::nanoseconds::max()).never());
  EXPECT_TRUE(deadline().never());
  EXPECT_TRUE(deadline(no_deadline).never());
}

TEST(deadline, ASteadyClockTimePointIsOnTheReactorClock) {
  // The reactor clock keeps CLOCK_MONOTONIC's epoch (steady_clock's) to 20 us.
  const auto at = std::chrono::steady_clock::now() + 50ms;
  const deadline d = at;
  EXPECT_NEAR(double(diff(d.ns(), now_ns())), 50e6, 1e6);
  EXPECT_EQ(deadline(std::chrono::steady_clock::time_point{}).ns(), 0u);
}

TEST(deadline, RawNanosecondsAreKept) {
  const std::uint64_t at = now_ns() + 123;
  EXPECT_EQ(deadline(at).ns(), at);
  EXPECT_EQ(std::uint64_t(deadline(at)), at);
}

using deadline_calls = runtime_test;

// Each blocking primitive gives up at a chrono deadline: never before it,
// and not long after.
TEST_F(deadline_calls, EveryBlockingPrimitiveTakesAChronoDeadline) {
  rt_->run([] {
    auto expect_gives_up = [](const char* what, auto&& call) {
      const std::uint64_t t0 = now_ns();
      EXPECT_FALSE(call()) << what;
      const std::int64_t waited = diff(now_ns(), t0);
      EXPECT_GE(waited, 10'000'000) << what;
      EXPECT_LT(waited, 1'000'000'000) << what;
    };
    event e;
    expect_gives_up("event::wait", [&] { return e.wait(10ms); });
    semaphore s;
    expect_gives_up("semaphore::acquire", [&] { return s.acquire(10ms); });
    mutex m;
    m.lock();
    expect_gives_up("mutex::lock_until", [&] {
      bool got = true;
      spawn([&] { got = m.lock_until(10ms).has_value(); }).value().join();
      return got;
    });
    condition_variable cv;
    expect_gives_up("condition_variable::wait", [&] { return cv.wait(m, 10ms); });
    expect_gives_up("condition_variable::wait(pred)", [&] { return cv.wait(m, [] { return false; }, 10ms); });
    m.unlock();
    expect_gives_up("wait_any(events)", [&] { return wait_any({&e}, 10ms).has_value(); });
    channel<int> ch(1);
    expect_gives_up("channel::recv", [&] { return ch.recv(10ms).has_value(); });
    (void)ch.try_send(1);
    expect_gives_up("channel::send", [&] { return ch.send(2, 10ms) == send_result::ok; });
    expect_gives_up("event::wait(time point)", [&] { return e.wait(clock::now() + 10ms); });
    const std::uint64_t t0 = now_ns();
    this_fiber::sleep_until(clock::now() + 10ms);
    EXPECT_GE(diff(now_ns(), t0), 10'000'000);
  });
}

}  // namespace
}  // namespace affine::test
