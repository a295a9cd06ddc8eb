// The reactor clock (reactor/clock.cc): now_ns() keeps CLOCK_MONOTONIC's
// epoch and rate whichever way it reads the time, stays within its stated
// bound of CLOCK_MONOTONIC over windows long enough to show any drift, brings
// a clock that started wrong back within it, and never runs backwards, on
// one thread or across threads, through its re-calibrations.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "affine/fiber.hh"
#include "reactor/clock.hh"
#include "reactor/cycles.hh"

namespace affine::test {
namespace {

using detail::tsc_clock;

std::int64_t diff(std::uint64_t a, std::uint64_t b) { return std::int64_t(a - b); }

// Why a clock started wrong on purpose cannot be tested (tsc_clock::scaled()).
constexpr const char* not_scaled =
    "the counter is not scaled here: /sys/devices/system/clocksource/clocksource0/current_clocksource "
    "is not tsc, or AFFINE_CLOCK=monotonic is set";

// The clock against CLOCK_MONOTONIC at one instant: the clock read between
// two CLOCK_MONOTONIC reads that were close (a bracket the OS preempted says
// nothing), and how far apart they were.
struct reading {
  std::int64_t offset_ns;  // clock - monotonic (> 0: ahead)
  std::int64_t error_ns;   // half the bracket
};
template <class Read>
reading read_against_monotonic(Read&& read) {
  reading best{0, INT64_MAX};
  for (int i = 0; i < 100 && best.error_ns > 1'000; ++i) {
    const std::uint64_t m0 = tsc_clock::monotonic_ns(), n = read(), m1 = tsc_clock::monotonic_ns();
    const std::int64_t half = std::int64_t(m1 - m0) / 2;
    if (half < best.error_ns) best = {diff(n, m0 + std::uint64_t(half)), half};
  }
  return best;
}

// Reads the clock against CLOCK_MONOTONIC every millisecond for `window`
// (from `check_after` on) and returns the largest |offset| less the
// reading's own error.
template <class Read>
std::int64_t worst_offset(Read&& read, std::chrono::milliseconds window, std::chrono::milliseconds check_after = {}) {
  const auto start = std::chrono::steady_clock::now();
  std::int64_t worst = 0;
  while (std::chrono::steady_clock::now() - start < window) {
    const reading r = read_against_monotonic(read);
    if (std::chrono::steady_clock::now() - start >= check_after)
      worst = std::max(worst, std::abs(r.offset_ns) - r.error_ns);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return worst;
}

TEST(reactor_clock, KeepsTheMonotonicClocksEpoch) {
  const reading r = read_against_monotonic(now_ns);
  EXPECT_LE(std::abs(r.offset_ns) - r.error_ns, tsc_clock::bound_ns);
}

// 1 s read every millisecond: a rate 1,550 ppm off (issue 25's CI failure)
// would be 1.5 ms out by the end; the promise is bound_ns at every read.
TEST(reactor_clock, StaysWithinItsBoundOfTheMonotonicClock) {
  EXPECT_LE(worst_offset(now_ns, std::chrono::milliseconds(1000)), tsc_clock::bound_ns);
}

TEST(reactor_clock, RunsAtTheMonotonicClocksRate) {
  const reading a = read_against_monotonic(now_ns);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const reading b = read_against_monotonic(now_ns);
  // A duration is the difference of two readings, each within the bound.
  EXPECT_LE(std::abs(b.offset_ns - a.offset_ns) - a.error_ns - b.error_ns, 2 * tsc_clock::bound_ns);
}

// A clock whose first rate is 5,000 ppm off (more than ten times worse than
// 5 ms of accepted samples can make it) is 50 us out after its first 10 ms
// piece; the re-calibration brings it within the bound and keeps it there.
// Without re-calibration it ends 4 ms out; with the rate re-measured but no
// slew, it stays 50 us out.
TEST(reactor_clock, AClockStartedWrongIsBroughtWithinItsBound) {
  for (const double ppm : {5000.0, -5000.0}) {
    tsc_clock c(tsc_clock::start{.rate_error_ppm = ppm});
    if (!c.scaled()) GTEST_SKIP() << not_scaled;
    auto read = [&c] { return c.now(); };
    EXPECT_LE(worst_offset(read, std::chrono::milliseconds(800), std::chrono::milliseconds(200)), tsc_clock::bound_ns)
        << "started " << ppm << " ppm off";
    // Re-calibrated as it was read (how often depends on how often this
    // thread ran: a loaded machine had 4 pieces in 800 ms where 8 were due).
    const auto st = c.stats();
    EXPECT_GE(st.calibrations, 2u) << "rejected " << st.samples_rejected << ", dropped " << st.pieces_dropped;
  }
}

TEST(reactor_clock, CyclesPerMicrosecondMatchesTheClock) {
  const std::uint64_t c0 = detail::cycles(), n0 = now_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::uint64_t c1 = detail::cycles(), n1 = now_ns();
  const double per_us = double(c1 - c0) / (double(n1 - n0) / 1000.0);
  EXPECT_NEAR(per_us, double(detail::cycles_per_us()), double(detail::cycles_per_us()) * 0.01);
}

// Reads for 300 ms and until `clock` has published two more pieces (at most
// 5 s: on a loaded machine a reading thread may be off its CPU for most of
// 300 ms, and a re-calibration is made by a reader), so that pieces begin
// under the reads.
template <class Read>
void expect_never_backwards_on_a_thread(Read&& read, const tsc_clock& clock) {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t calibrations = clock.stats().calibrations;
  auto elapsed = [&] { return std::chrono::steady_clock::now() - start; };
  std::uint64_t last = read();
  for (std::uint64_t i = 0; elapsed() < std::chrono::milliseconds(300) ||
                            (clock.scaled() && clock.stats().calibrations < calibrations + 2 && elapsed() < std::chrono::seconds(5));
       ++i) {
    const std::uint64_t t = read();
    ASSERT_GE(t, last) << "after " << i << " reads";
    last = t;
  }
  if (clock.scaled()) {
    const auto st = clock.stats();
    EXPECT_GE(st.calibrations, calibrations + 2) << "rejected " << st.samples_rejected << ", dropped "
                                                 << st.pieces_dropped;
  }
}

TEST(reactor_clock, NeverRunsBackwardsOnAThread) { expect_never_backwards_on_a_thread(now_ns, detail::process_clock()); }

// A time one thread read and published is never in the future of a thread
// that reads the clock after seeing it: deadlines cross cores. Returns the
// most negative (read - seen) over 300 ms or more of two threads doing so.
template <class Read>
std::int64_t worst_seen_in_the_future(Read&& read, const tsc_clock& clock) {
  std::atomic<std::uint64_t> published{read()};
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> worst{0};
  auto reader = [&] {
    std::int64_t w = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const std::uint64_t seen = published.load(std::memory_order_acquire);
      const std::uint64_t t = read();
      w = std::min(w, diff(t, seen));
      published.store(t, std::memory_order_release);
    }
    std::int64_t cur = worst.load();
    while (w < cur && !worst.compare_exchange_weak(cur, w)) {
    }
  };
  std::vector<std::thread> threads;
  const std::uint64_t calibrations = clock.stats().calibrations;
  for (int i = 0; i < 2; ++i) threads.emplace_back(reader);
  // 300 ms, and until two pieces began under the readers (at most 5 s).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < 470 && clock.scaled() && clock.stats().calibrations < calibrations + 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop = true;
  for (auto& t : threads) t.join();
  return worst.load();
}

TEST(reactor_clock, ATimeSeenOnAnotherThreadIsNotInTheFuture) {
  // Counters in step across CPUs (the kernel's condition for keeping time
  // by the TSC, checked for warps at boot) and read fenced: none behind.
  // An unfenced read was up to 2 us behind here (reactor/cycles.hh), most
  // runs by more than 10 ns; the margin is for a cross-socket machine.
  EXPECT_GE(worst_seen_in_the_future(now_ns, detail::process_clock()), -200);
}

// Pieces begin under readers on two threads while the clock slews hard (it
// started 5,000 ppm off): every reader still computes one function.
TEST(reactor_clock, PiecesHandOverWithoutAStepBackOnAnyThread) {
  tsc_clock c(tsc_clock::start{.rate_error_ppm = 5000});
  if (!c.scaled()) GTEST_SKIP() << not_scaled;
  auto read = [&c] { return c.now(); };
  const std::uint64_t before = c.stats().calibrations;
  EXPECT_GE(worst_seen_in_the_future(read, c), -200);
  EXPECT_GE(c.stats().calibrations, before + 2) << "pieces that began under the two threads";
  expect_never_backwards_on_a_thread(read, c);
}

// A manual clock (the virtual time tests/fuzz/stack.cc runs the runtime at)
// reads what it was last set to, whatever the counter does, and never goes
// back: an earlier time set is ignored.
TEST(reactor_clock, AManualClockReadsWhatItWasSetToAndNeverGoesBack) {
  tsc_clock c(tsc_clock::start{.manual_ns = 5'000'000'000});
  ASSERT_TRUE(c.manual());
  EXPECT_FALSE(c.scaled());
  EXPECT_EQ(c.now(), 5'000'000'000u);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(c.now(), 5'000'000'000u) << "a manual clock moved by itself";
  c.set_manual(5'000'000'123);
  EXPECT_EQ(c.now(), 5'000'000'123u);
  c.set_manual(4'000'000'000);
  EXPECT_EQ(c.now(), 5'000'000'123u) << "a manual clock went back";
  std::uint64_t seen = 0;
  std::thread other([&] { seen = c.now(); });
  other.join();
  EXPECT_EQ(seen, 5'000'000'123u) << "another thread read another time";
}

// The process clock is made at its first read: asking for a manual one
// afterwards changes nothing (the clock keeps running on its own).
TEST(reactor_clock, TheProcessClockCannotTurnManualOnceRead) {
  const std::uint64_t a = now_ns();
  EXPECT_FALSE(detail::start_manual_clock(1'000));
  EXPECT_FALSE(detail::process_clock().manual());
  EXPECT_GE(now_ns(), a);
}

}  // namespace
}  // namespace affine::test
