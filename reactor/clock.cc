// The reactor clock, now_ns(): CLOCK_MONOTONIC's epoch and rate, read from
// the CPU's time-stamp counter where the kernel itself keeps time by it, and
// kept within tsc_clock::bound_ns of CLOCK_MONOTONIC for the life of the
// process.
//
// Why the counter: clock_gettime costs 28-38 ns on these VMs (the vDSO fences
// its rdtsc and reads a seqlock), and a request/response on the stack reads
// the clock some ten times on its critical path (docs/stack.md). Where the
// kernel's clocksource is "tsc" (it has checked that the counter is invariant
// and in step across CPUs), now_ns scales the counter, as Caladan's
// microtime() and DPDK's timer cycles do, and reads it fenced as the vDSO
// does (cycles_ordered, reactor/cycles.hh): a deadline another core set is
// never in the future of a core that saw it. Elsewhere, or with
// AFFINE_CLOCK=monotonic in the environment, now_ns is clock_gettime itself.
// A harness that runs the runtime at virtual time makes it manual before its
// first read (start_manual_clock): now_ns is then what it was last set to.
//
// Why it keeps calibrating: a rate measured once, over one window at start-up,
// is as good as whatever the machine was doing in that window. A fresh CI run
// had one 1,550 ppm slow (issue 25: 100 ms measured as 100.28), and
// CLOCK_MONOTONIC itself changes rate when NTP slews it (up to 500 ppm). So
// the clock is disciplined, as NTP disciplines a kernel clock: it is a chain
// of linear pieces (clock.hh), and whichever thread first reads the clock past
// a piece's end takes a new (counter, CLOCK_MONOTONIC) sample and publishes
// the next piece: its rate is the counter's rate over the last piece, plus a
// slew (at most max_slew) that closes the measured offset over the piece's
// length. Pieces last 10 ms at first, doubling to 100 ms: a re-calibration
// costs one sample (16 paired reads, about 1.5 us), some 15 us per second of
// one thread's time, and keeps the offset to the counter's rate change over
// 100 ms plus the sample's error. The clock never steps back: a piece
// starts where the last one was at its base, and an offset is closed by
// running faster or slower. Only when it is behind by more than step_ns (the
// counter cannot have been trusted) does it step forward.
//
// Readers take no lock and never wait: the two newest pieces sit in two
// slots, and a generation tells which one is current (a reader that saw it
// change reads again). A writer stopped at any point delays no reader. A new
// piece starts `margin` (1 ms) after the sample it is made from, and the
// writer gives it up unless it publishes with half the margin left, so every
// reader computes the same function of the counter. What is left: a writer
// the OS stops for more than 0.5 ms between its last check and the one store
// that publishes would let a reader still holding the previous piece differ
// from one holding the new one by that delay times their rates' difference
// (at most max_slew, a few ppm once settled); such a publish is counted
// (late_publishes), and so is a piece given up (pieces_dropped).
//
// Figures (docs/reactor.md "Clock", bench/run clock): the offset against
// CLOCK_MONOTONIC over 10 minutes with both CPUs loaded, the cost per read.

#include "reactor/clock.hh"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "affine/fiber.hh"

namespace affine {

namespace detail {

namespace {

constexpr std::uint64_t calibrate_ns = 5'000'000;  // the first rate's window
constexpr std::uint64_t first_period_ns = 10'000'000;
constexpr std::uint64_t max_period_ns = 100'000'000;
constexpr std::uint64_t margin_ns = 1'000'000;     // publish to base
constexpr std::uint64_t retry_ns = 1'000'000;      // after a sample was rejected
constexpr std::uint64_t max_gap_ns = 2'000;        // a sample's counter reads at most this far apart
constexpr std::int64_t step_ns = 1'000'000;        // behind by more: step forward
constexpr double max_slew = 0.01;                  // 10,000 ppm

bool kernel_keeps_time_by_tsc() {
  if (const char* e = std::getenv("AFFINE_CLOCK"); e != nullptr && std::strcmp(e, "monotonic") == 0) return false;
  std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return f >> name && name == "tsc";
}

std::uint64_t q32(double ns_per_tick) { return std::uint64_t(std::llround(ns_per_tick * 4294967296.0)); }

}  // namespace

std::uint64_t tsc_clock::monotonic_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000ULL + std::uint64_t(ts.tv_nsec);
}

// One (counter, clock) pair, taken where the two counter reads around the
// clock read are closest: the pair's error is at most half that gap.
tsc_clock::sample tsc_clock::take_sample() noexcept {
  sample best{};
  for (int i = 0; i < 16; ++i) {
    const std::uint64_t a = cycles_ordered(), ns = monotonic_ns(), b = cycles_ordered();
    if (b - a < best.gap) best = {a + (b - a) / 2, ns, b - a};
  }
  return best;
}

tsc_clock::tsc_clock(start st) {
  if (st.manual_ns) {
    manual_ = true;
    manual_now_.store(*st.manual_ns, std::memory_order_relaxed);
    return;
  }
  // The first rate: two samples 5 ms apart, each retried while its reads
  // were far apart (a sample taken across a preemption is worth nothing;
  // the rate is not known yet, so the bound is in ticks: 8,192, 3 us at
  // 2.6 GHz, against about 80 in a quiet sample).
  const auto good_sample = [] {
    sample s = take_sample();
    for (int i = 0; i < 100 && s.gap > 8192; ++i) s = take_sample();
    return s;
  };
  const sample a = good_sample();
  while (monotonic_ns() - a.ns < calibrate_ns) {
  }
  const sample b = good_sample();
  const double ns_per_tick = double(b.ns - a.ns) / double(b.tsc - a.tsc);
  ticks_per_us_ = std::max<std::uint64_t>(1, std::uint64_t(1000.0 / ns_per_tick + 0.5));
  // A counter slower than 1 MHz is no clock to scale (a broken TSC).
  scaled_ = ticks_per_us_ > 1 && kernel_keeps_time_by_tsc();
  if (!scaled_) return;
  ticks_per_ns_ = 1.0 / ns_per_tick;
  last_ = b;
  period_ns_ = first_period_ns;
  const std::uint64_t rate = q32(ns_per_tick * (1.0 + st.rate_error_ppm * 1e-6));
  const std::uint64_t len = std::uint64_t(double(period_ns_) * ticks_per_ns_);
  piece& p = pieces_[0];
  p.base_tsc.store(b.tsc, std::memory_order_relaxed);
  p.base_ns.store(b.ns, std::memory_order_relaxed);
  p.slew_q32.store(rate, std::memory_order_relaxed);
  p.len_ticks.store(len, std::memory_order_relaxed);
  p.end_ns.store(b.ns + mul_q32(len, rate), std::memory_order_relaxed);
  p.rate_q32.store(rate, std::memory_order_relaxed);
  // Before the first base (another CPU's counter a few ticks behind): the base.
  p.prev_end_tsc.store(b.tsc, std::memory_order_relaxed);
  p.prev_end_ns.store(b.ns, std::memory_order_relaxed);
  p.prev_rate_q32.store(0, std::memory_order_relaxed);
  gen_.store(0, std::memory_order_release);
}

void tsc_clock::set_manual(std::uint64_t ns) noexcept {
  std::uint64_t seen = manual_now_.load(std::memory_order_relaxed);
  while (seen < ns && !manual_now_.compare_exchange_weak(seen, ns, std::memory_order_acq_rel)) {
  }
}

std::uint64_t tsc_clock::outside_piece(std::uint64_t g, std::uint64_t t) noexcept {
  const piece& p = pieces_[g & 1];
  const std::uint64_t base = p.base_tsc.load(std::memory_order_acquire);
  const std::uint64_t end = base + p.len_ticks.load(std::memory_order_acquire);
  const std::uint64_t end_ns = p.end_ns.load(std::memory_order_acquire);
  const std::uint64_t rate = p.rate_q32.load(std::memory_order_acquire);
  const std::uint64_t prev_end = p.prev_end_tsc.load(std::memory_order_acquire);
  const std::uint64_t prev_end_ns = p.prev_end_ns.load(std::memory_order_acquire);
  const std::uint64_t prev_rate = p.prev_rate_q32.load(std::memory_order_acquire);
  if (gen_.load(std::memory_order_acquire) != g) return 0;
  if (std::int64_t(t - base) < 0) {
    // Published, not yet begun: the previous piece's tail, which this
    // counter value is in (the writer sampled after that tail began).
    if (std::int64_t(t - prev_end) <= 0) return prev_end_ns;
    return prev_end_ns + mul_q32(t - prev_end, prev_rate);
  }
  const std::uint64_t v = end_ns + mul_q32(t - end, rate);
  recalibrate(t);
  return v;
}

void tsc_clock::recalibrate(std::uint64_t t) noexcept {
  if (std::int64_t(t - next_try_tsc_.load(std::memory_order_relaxed)) < 0) return;
  if (writing_.exchange(true, std::memory_order_acquire)) return;
  const auto done = [this] { writing_.store(false, std::memory_order_release); };
  const std::uint64_t g = gen_.load(std::memory_order_relaxed);  // only writers change it
  const piece& cur = pieces_[g & 1];
  const std::uint64_t end_tsc = cur.base_tsc.load(std::memory_order_relaxed) + cur.len_ticks.load(std::memory_order_relaxed);
  const sample s = take_sample();
  // Another writer may have just published: a new piece is not re-made.
  if (std::int64_t(s.tsc - end_tsc) < 0) return done();
  if (double(s.gap) > double(max_gap_ns) * ticks_per_ns_ || s.ns <= last_.ns || s.tsc <= last_.tsc) {
    samples_rejected_.fetch_add(1, std::memory_order_relaxed);
    next_try_tsc_.store(s.tsc + std::uint64_t(double(retry_ns) * ticks_per_ns_), std::memory_order_relaxed);
    return done();
  }
  // The counter's rate since the last sample, in nanoseconds per tick.
  const double r = double(s.ns - last_.ns) / double(s.tsc - last_.tsc);
  const std::uint64_t margin = std::uint64_t(double(margin_ns) / r);
  const std::uint64_t base = s.tsc + margin;
  const std::uint64_t cur_end_ns = cur.end_ns.load(std::memory_order_relaxed);
  const std::uint64_t cur_rate = cur.rate_q32.load(std::memory_order_relaxed);
  std::uint64_t base_ns = cur_end_ns + mul_q32(base - end_tsc, cur_rate);  // where the clock will be
  const std::uint64_t mono_at_base = s.ns + margin_ns;                      // where it should be
  std::int64_t offset = std::int64_t(mono_at_base - base_ns);              // > 0: behind
  if (offset > step_ns) {
    steps_forward_.fetch_add(1, std::memory_order_relaxed);
    base_ns = mono_at_base;
    offset = 0;
  }
  const double correction = std::clamp(double(offset) / double(period_ns_), -max_slew, max_slew);
  const std::uint64_t slew = q32(r * (1.0 + correction));
  const std::uint64_t len = std::uint64_t(double(period_ns_) / r);
  const std::uint64_t rate = q32(r);
  // Published with half the margin left, or not at all (clock.hh: every
  // reader must agree on the value at every counter value).
  if (std::int64_t(base - cycles_ordered()) < std::int64_t(margin / 2)) {
    pieces_dropped_.fetch_add(1, std::memory_order_relaxed);
    return done();
  }
  piece& next = pieces_[(g + 1) & 1];
  next.base_tsc.store(base, std::memory_order_release);
  next.base_ns.store(base_ns, std::memory_order_release);
  next.slew_q32.store(slew, std::memory_order_release);
  next.len_ticks.store(len, std::memory_order_release);
  next.end_ns.store(base_ns + mul_q32(len, slew), std::memory_order_release);
  next.rate_q32.store(rate, std::memory_order_release);
  next.prev_end_tsc.store(end_tsc, std::memory_order_release);
  next.prev_end_ns.store(cur_end_ns, std::memory_order_release);
  next.prev_rate_q32.store(cur_rate, std::memory_order_release);
  gen_.store(g + 1, std::memory_order_release);
  if (std::int64_t(base - cycles_ordered()) <= 0) late_publishes_.fetch_add(1, std::memory_order_relaxed);
  last_ = s;
  ticks_per_ns_ = 1.0 / r;
  period_ns_ = std::min(period_ns_ * 2, max_period_ns);
  calibrations_.fetch_add(1, std::memory_order_relaxed);
  done();
}

tsc_clock::counters tsc_clock::stats() const noexcept {
  return {calibrations_.load(std::memory_order_relaxed), samples_rejected_.load(std::memory_order_relaxed),
          pieces_dropped_.load(std::memory_order_relaxed), late_publishes_.load(std::memory_order_relaxed),
          steps_forward_.load(std::memory_order_relaxed)};
}

namespace {
std::atomic<std::uint64_t> manual_start{0};  // start_manual_clock's, before the clock was made; 0: none

tsc_clock::start process_start() {
  const std::uint64_t m = manual_start.load(std::memory_order_acquire);
  return m != 0 ? tsc_clock::start{.manual_ns = m} : tsc_clock::start{};
}

// Inlined into now_ns(): a call and a frame are a tenth of a read.
[[gnu::always_inline]] inline tsc_clock& the_clock() {
  static tsc_clock c(process_start());
  return c;
}
}  // namespace

tsc_clock& process_clock() { return the_clock(); }

bool start_manual_clock(std::uint64_t start_ns) {
  manual_start.store(std::max<std::uint64_t>(start_ns, 1), std::memory_order_release);
  return the_clock().manual();
}

void set_manual_clock(std::uint64_t ns) noexcept { the_clock().set_manual(ns); }

std::uint64_t cycles_per_us() noexcept { return process_clock().ticks_per_us(); }

}  // namespace detail

std::uint64_t now_ns() { return detail::the_clock().now(); }

}  // namespace affine
