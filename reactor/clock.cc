// The reactor clock, now_ns(): CLOCK_MONOTONIC's epoch and rate, read from
// the CPU's time-stamp counter where the kernel itself keeps time by it.
//
// clock_gettime costs about 38 ns on this kind of VM (the vDSO fences its
// rdtsc and reads a seqlock), and a request/response on the stack read the
// clock some ten times on its critical path: about 0.2 us of a 1.6 us round
// trip (docs/stack.md). Where the kernel's clocksource is "tsc" (the kernel
// has checked that the counter is invariant and in step across CPUs), now_ns
// scales the counter with a rate measured once against CLOCK_MONOTONIC at
// first use, as Caladan's microtime() and DPDK's timer cycles do. It reads
// the counter fenced, as the vDSO does (cycles_ordered, reactor/cycles.hh):
// a deadline another core set is never in the future of a core that saw it
// (about 21 ns against clock_gettime's 28 on the 2026-12 machine). The rate
// is good to some tens of ppm: durations and deadlines, the clock's only
// uses, are off by that much; it is not for comparing with other clocks.
// Elsewhere, or with AFFINE_CLOCK=monotonic in the environment, now_ns is
// clock_gettime itself.

#include <time.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "affine/fiber.hh"
#include "reactor/cycles.hh"

namespace affine {

namespace {

std::uint64_t monotonic_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000ULL + std::uint64_t(ts.tv_nsec);
}

bool kernel_keeps_time_by_tsc() {
  if (const char* e = std::getenv("AFFINE_CLOCK"); e != nullptr && std::strcmp(e, "monotonic") == 0) return false;
  std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return f >> name && name == "tsc";
}

// One (counter, clock) pair, taken where the two counter reads around the
// clock read are closest: the pair's error is half that gap.
struct sample {
  std::uint64_t tsc, ns;
};
sample take_sample() noexcept {
  sample best{};
  std::uint64_t best_gap = ~0ULL;
  for (int i = 0; i < 16; ++i) {
    const std::uint64_t a = detail::cycles_ordered(), ns = monotonic_ns(), b = detail::cycles_ordered();
    if (b - a < best_gap) best_gap = b - a, best = {a + (b - a) / 2, ns};
  }
  return best;
}

struct scale {
  bool tsc = false;
  std::uint64_t tsc0 = 0, ns0 = 0;
  std::uint64_t ns_per_tick_q32 = 0;  // nanoseconds per tick, 32.32 fixed point
  std::uint64_t ticks_per_us = 1;
};

scale measure() {
  scale s;
  // 5 ms between two samples whose errors are tens of ns: a rate good to
  // about 10 ppm, for a one-time cost at the first now_ns().
  const sample a = take_sample();
  while (monotonic_ns() - a.ns < 5'000'000) {
  }
  const sample b = take_sample();
  const double ticks_per_ns = double(b.tsc - a.tsc) / double(b.ns - a.ns);
  s.ticks_per_us = std::uint64_t(ticks_per_ns * 1000.0 + 0.5);
  if (s.ticks_per_us == 0) s.ticks_per_us = 1;
  // A counter slower than 1 MHz is no clock to scale (a broken TSC).
  s.tsc = s.ticks_per_us > 1 && kernel_keeps_time_by_tsc();
  if (!s.tsc) return s;
  s.tsc0 = b.tsc;
  s.ns0 = b.ns;
  s.ns_per_tick_q32 = std::uint64_t(4294967296.0 / ticks_per_ns);
  return s;
}

const scale& the_scale() {
  static const scale s = measure();
  return s;
}

}  // namespace

std::uint64_t now_ns() {
  const scale& s = the_scale();
  if (!s.tsc) return monotonic_ns();
  // Another CPU's counter may trail the one that took the sample by a few
  // ticks: never before the epoch.
  const std::int64_t ticks = std::int64_t(detail::cycles_ordered() - s.tsc0);
  if (ticks <= 0) return s.ns0;
  return s.ns0 + std::uint64_t((unsigned __int128)std::uint64_t(ticks) * s.ns_per_tick_q32 >> 32);
}

namespace detail {

std::uint64_t cycles_per_us() noexcept { return the_scale().ticks_per_us; }

}  // namespace detail

}  // namespace affine
