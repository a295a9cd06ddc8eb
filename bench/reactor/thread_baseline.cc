// The baseline beside affine's figures: OS threads handing control to each
// other through std::mutex + std::condition_variable (futex wait/wake).

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "affine/fiber.hh"
#include "bench/reactor/bench_util.hh"

namespace affine::bench {

namespace {

void pin(std::thread& t, unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::pthread_setaffinity_np(t.native_handle(), sizeof set, &set);
}

// Two threads take turns `rounds` times; returns the per-handoff wake
// latencies (from notify to the other thread running).
std::vector<std::uint64_t> ping_pong(unsigned rounds, unsigned cpu_a, unsigned cpu_b, std::uint64_t* total_ns) {
  std::mutex m;
  std::condition_variable cv;
  unsigned turn = 0;  // even: a runs, odd: b runs
  std::uint64_t sent_at = 0;
  std::vector<std::uint64_t> lat;
  lat.reserve(2 * rounds);
  auto side = [&](unsigned parity) {
    std::unique_lock lk(m);
    for (unsigned i = 0; i < rounds; ++i) {
      cv.wait(lk, [&] { return turn % 2 == parity; });
      if (turn > 0) lat.push_back(now_ns() - sent_at);
      ++turn;
      sent_at = now_ns();
      cv.notify_one();
    }
  };
  const std::uint64_t t0 = now_ns();
  std::thread a(side, 0), b(side, 1);
  pin(a, cpu_a);
  pin(b, cpu_b);
  a.join();
  b.join();
  *total_ns = now_ns() - t0;
  return lat;
}

}  // namespace

thread_figures measure_threads(unsigned rounds, unsigned cpu_a, unsigned cpu_b) {
  std::uint64_t same_core_ns = 0, cross_ns = 0;
  ping_pong(rounds, cpu_a, cpu_a, &same_core_ns);  // both on one core: a switch per handoff
  auto lat = ping_pong(rounds, cpu_a, cpu_b, &cross_ns);
  return {double(same_core_ns) / (2.0 * rounds), percentile(lat, 50), percentile(lat, 99)};
}

}  // namespace affine::bench
