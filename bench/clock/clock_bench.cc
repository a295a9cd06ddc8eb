// bench/run clock: the reactor clock (reactor/clock.cc) against CLOCK_MONOTONIC.
//
//   {"bench":"clock","variant":"read-cost",...}  ns per read: now_ns, clock_gettime, the fenced counter
//   {"bench":"clock","variant":"drift",...}      now_ns - CLOCK_MONOTONIC over --seconds, every --interval-ms
//   {"bench":"clock","variant":"calibrated-once",...}
//       the same readings for a clock scaled by one 5 ms measurement at
//       start, as now_ns was before it re-calibrated: what the discipline
//       is worth on this machine in this run.
//
// --load N runs N threads of compute beside the readings (each also reads
// now_ns every few microseconds, as reactors do, so the thread that
// re-calibrates is often one the OS preempts). Offsets are taken between two
// CLOCK_MONOTONIC reads less than 2 us apart; a reading's own error (half
// that gap) is reported beside the offsets, which are not reduced by it.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "affine/fiber.hh"
#include "bench/reactor/bench_util.hh"
#include "reactor/clock.hh"
#include "reactor/cycles.hh"

namespace affine::bench {
namespace {

using detail::tsc_clock;

struct options {
  double seconds = 10;
  unsigned load = 0;
  unsigned interval_ms = 1;
};

template <class F>
double ns_per_call(F&& f, unsigned n) {
  std::uint64_t sink = 0;
  const std::uint64_t t0 = tsc_clock::monotonic_ns();
  for (unsigned i = 0; i < n; ++i) sink += f();
  const std::uint64_t t1 = tsc_clock::monotonic_ns();
  asm volatile("" : : "r"(sink));
  return double(t1 - t0) / double(n);
}

void read_cost() {
  // Rounds alternate the three reads; the median round of each is printed.
  std::vector<std::uint64_t> now, mono, counter;
  for (int round = 0; round < 9; ++round) {
    now.push_back(std::uint64_t(100 * ns_per_call([] { return now_ns(); }, 2'000'000)));
    mono.push_back(std::uint64_t(100 * ns_per_call([] { return tsc_clock::monotonic_ns(); }, 2'000'000)));
    counter.push_back(std::uint64_t(100 * ns_per_call([] { return detail::cycles_ordered(); }, 2'000'000)));
  }
  fmt::print("{{\"bench\":\"clock\",\"variant\":\"read-cost\",\"scaled\":{},\"now_ns_ns\":{:.2f},"
             "\"clock_gettime_ns\":{:.2f},\"cycles_ordered_ns\":{:.2f}}}\n",
             detail::process_clock().scaled(), percentile(now, 50) / 100, percentile(mono, 50) / 100,
             percentile(counter, 50) / 100);
}

struct readings {
  std::vector<std::uint64_t> abs_offset_ns;
  std::int64_t max_error_ns = 0;
  std::uint64_t unreadable = 0;  // no bracket under 2 us in 100 tries
  void add(std::int64_t offset, std::int64_t error) {
    abs_offset_ns.push_back(std::uint64_t(std::abs(offset)));
    max_error_ns = std::max(max_error_ns, error);
  }
  void print(const char* variant, const options& o, const std::string& extra) {
    const std::size_t n = abs_offset_ns.size();
    fmt::print("{{\"bench\":\"clock\",\"variant\":\"{}\",\"seconds\":{},\"load_threads\":{},\"samples\":{},"
               "\"unreadable_samples\":{},\"p50_abs_offset_ns\":{},\"p99_abs_offset_ns\":{},"
               "\"p999_abs_offset_ns\":{},\"max_abs_offset_ns\":{},\"max_reading_error_ns\":{},\"bound_ns\":{}{}}}\n",
               variant, o.seconds, o.load, n, unreadable, percentile(abs_offset_ns, 50),
               percentile(abs_offset_ns, 99), percentile(abs_offset_ns, 99.9),
               n ? *std::max_element(abs_offset_ns.begin(), abs_offset_ns.end()) : 0, max_error_ns,
               tsc_clock::bound_ns, extra);
  }
};

// A clock calibrated once over 5 ms, then extrapolated (the reference).
struct once_calibrated {
  std::uint64_t tsc0 = 0, ns0 = 0;
  double ns_per_tick = 0;
  once_calibrated() {
    const tsc_clock::sample a = tsc_clock::take_sample();
    while (tsc_clock::monotonic_ns() - a.ns < 5'000'000) {
    }
    const tsc_clock::sample b = tsc_clock::take_sample();
    tsc0 = b.tsc, ns0 = b.ns;
    ns_per_tick = double(b.ns - a.ns) / double(b.tsc - a.tsc);
  }
  std::uint64_t at(std::uint64_t tsc) const { return ns0 + std::uint64_t(double(tsc - tsc0) * ns_per_tick); }
};

void drift(const options& o) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (unsigned i = 0; i < o.load; ++i)
    load.emplace_back([&stop] {
      std::uint64_t x = 1;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int k = 0; k < 4000; ++k) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        x += now_ns();
      }
      asm volatile("" : : "r"(x));
    });
  const once_calibrated once;
  readings disciplined, reference;
  const auto before = detail::process_clock().stats();
  const std::uint64_t end = tsc_clock::monotonic_ns() + std::uint64_t(o.seconds * 1e9);
  while (tsc_clock::monotonic_ns() < end) {
    bool got = false;
    for (int i = 0; i < 100 && !got; ++i) {
      const std::uint64_t m0 = tsc_clock::monotonic_ns();
      const std::uint64_t n = now_ns();
      const std::uint64_t c = detail::cycles_ordered();
      const std::uint64_t m1 = tsc_clock::monotonic_ns();
      if (m1 - m0 >= 2'000) continue;
      const std::uint64_t mid = m0 + (m1 - m0) / 2;
      disciplined.add(std::int64_t(n - mid), std::int64_t(m1 - m0) / 2);
      reference.add(std::int64_t(once.at(c) - mid), std::int64_t(m1 - m0) / 2);
      got = true;
    }
    if (!got) ++disciplined.unreadable, ++reference.unreadable;
    std::this_thread::sleep_for(std::chrono::milliseconds(o.interval_ms));
  }
  stop = true;
  for (auto& t : load) t.join();
  const auto after = detail::process_clock().stats();
  disciplined.print("drift", o,
                    fmt::format(",\"calibrations\":{},\"samples_rejected\":{},\"pieces_dropped\":{},\"late_publishes\":{},"
                                "\"steps_forward\":{}",
                                after.calibrations - before.calibrations,
                                after.samples_rejected - before.samples_rejected,
                                after.pieces_dropped - before.pieces_dropped,
                                after.late_publishes - before.late_publishes,
                                after.steps_forward - before.steps_forward));
  reference.print("calibrated-once", o, "");
}

}  // namespace
}  // namespace affine::bench

int main(int argc, char** argv) {
  using namespace affine::bench;
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 < argc && a == "--seconds") o.seconds = std::strtod(argv[++i], nullptr);
    else if (i + 1 < argc && a == "--load") o.load = unsigned(std::strtoul(argv[++i], nullptr, 10));
    else if (i + 1 < argc && a == "--interval-ms") o.interval_ms = unsigned(std::strtoul(argv[++i], nullptr, 10));
    else {
      fmt::print(stderr, "usage: clock_bench [--seconds S] [--load THREADS] [--interval-ms MS]\n");
      return 2;
    }
  }
  affine::now_ns();  // the clock's first calibration, before anything is timed
  read_cost();
  drift(o);
  return 0;
}
