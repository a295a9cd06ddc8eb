// bench/run reactor: the reactor's basic costs, side by side with OS threads.
//
//   {"bench":"reactor","variant":"affine",...}          fibers on reactors whose idle spin covers the run
//   {"bench":"reactor","variant":"affine-preempt",...}  the same with reactor.preempt = "on", median ratios of 9 pairs
//   {"bench":"reactor","variant":"affine-sleeping",...} the same wakeups to a reactor that sleeps at once
//   {"bench":"reactor","variant":"thread-condvar",...}  std::thread + condition_variable (futex)
//   {"bench":"reactor","variant":"affine-idle",...}     CPU used by idle reactors after their spin time
//
// switch_ns: one fiber handing the core to another (yield), both on one core.
// wake_*_ns: from a release on core 0 to the woken fiber running on core 1.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "affine/runtime.hh"
#include "affine/sync.hh"
#include "bench/reactor/bench_util.hh"
#include "reactor/policy/config.hh"

namespace affine::bench {
namespace {

struct options {
  unsigned switches = 2'000'000;
  unsigned spawns = 200'000;
  unsigned wakes = 20'000;
  unsigned idle_seconds = 5;
};

std::unique_ptr<runtime> start(const topology& topo, std::uint32_t spin_us, bool preempt = false) {
  runtime_options o;
  o.cores = {core_id{0}, core_id{1}};
  o.spin_us = spin_us;
  o.preempt = preempt;
  auto rt = runtime::start(topo, o);
  if (!rt) {
    fmt::print(stderr, "reactor_bench: {}\n", rt.error());
    std::exit(1);
  }
  return std::move(*rt);
}

// Both measurements run in fibers pinned to core 0: otherwise the idle
// core 1 steals one partner (policy/balance) and the figures become
// cross-core wakeups instead of switches.
double measure_switch(runtime& rt, unsigned n) {
  return rt.run([n] { return submit_to(0, [n] {
    const std::uint64_t t0 = now_ns();
    auto other = spawn([n] { for (unsigned i = 0; i < n / 2; ++i) this_fiber::yield(); },
                       {.core = 0, .pinned = true}).value();
    for (unsigned i = 0; i < n / 2; ++i) this_fiber::yield();
    other.join();
    return double(now_ns() - t0) / double(n);
  }); });
}

double measure_spawn_join(runtime& rt, unsigned n) {
  return rt.run([n] { return submit_to(0, [n] {
    const std::uint64_t t0 = now_ns();
    for (unsigned i = 0; i < n; ++i) spawn([] {}, {.core = 0, .pinned = true}).value().join();
    return double(now_ns() - t0) / double(n);
  }); });
}

// Fibers pinned to core 0 and core 1 take turns through two semaphores.
std::vector<std::uint64_t> measure_wakes(runtime& rt, unsigned n) {
  return rt.run([n] {
    semaphore to_b(0), to_a(0);
    std::atomic<std::uint64_t> sent_at{0};
    std::vector<std::uint64_t> lat;
    lat.reserve(2 * n);
    auto b = spawn([&] {
      for (unsigned i = 0; i < n; ++i) {
        to_b.acquire();
        lat.push_back(now_ns() - sent_at.load(std::memory_order_relaxed));
        sent_at.store(now_ns(), std::memory_order_relaxed);
        to_a.release();
      }
    }, {.core = 1, .pinned = true}).value();
    auto a = spawn([&] {
      for (unsigned i = 0; i < n; ++i) {
        sent_at.store(now_ns(), std::memory_order_relaxed);
        to_b.release();
        to_a.acquire();
        lat.push_back(now_ns() - sent_at.load(std::memory_order_relaxed));
      }
    }, {.core = 0, .pinned = true}).value();
    a.join();
    b.join();
    return lat;
  });
}

}  // namespace
}  // namespace affine::bench

int main(int argc, char** argv) {
  using namespace affine;
  using namespace affine::bench;
  options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto num = [&](unsigned& dst) {
      if (i + 1 >= argc) {
        fmt::print(stderr, "reactor_bench: {} needs a number\n", a);
        std::exit(2);
      }
      dst = unsigned(std::strtoul(argv[++i], nullptr, 10));
    };
    if (a == "--switches") num(opt.switches);
    else if (a == "--spawns") num(opt.spawns);
    else if (a == "--wakes") num(opt.wakes);
    else if (a == "--idle-seconds") num(opt.idle_seconds);
    else if (a == "--quick") opt = {200'000, 20'000, 2'000, 1};
    else {
      fmt::print(stderr, "usage: reactor_bench [--quick] [--switches N] [--spawns N] [--wakes N] [--idle-seconds N]\n");
      return 2;
    }
  }
  auto sys = topology::from_system();
  const bool real = sys && sys->core_count() >= 2;
  auto syn = topology::from_synthetic("pack:1 numa:1 l3:1 core:2 pu:1");
  const topology& topo = real ? *sys : *syn;
  const unsigned cpu0 = topo.core(core_id{0}).os_cpu, cpu1 = topo.core(core_id{1}).os_cpu;

  // Reactors that spin through the whole measurement (spin_us = 1 s), with
  // reactor.preempt off and on and nothing to preempt (the cost of the
  // ticks alone): `pairs` pairs, each one off and one on back to back (the
  // order alternating, so neither gets the warmer machine or the fresher
  // memory), the ratio on / off of each pair and its median over the pairs
  // (this VM's figures drift by more than the cost measured), beside the
  // best absolute figures of each.
  constexpr int pairs = 9;
  struct figures {
    double switch_ns = 1e18, spawn_join_ns = 1e18, wake_p50_ns = 1e18, wake_p99_ns = 1e18;
    std::size_t samples = 0;
    std::uint64_t preemptions = 0;
  } best[2];
  std::vector<double> switch_ratio, spawn_ratio, wake_ratio;
  for (int pair = 0; pair < pairs; ++pair) {
    double sw[2], sj[2], p50[2];
    for (const bool preempt : {pair % 2 == 1, pair % 2 == 0}) {
      auto rt = start(topo, 1'000'000, preempt);
      const int k = preempt ? 1 : 0;
      figures& b = best[k];
      sw[k] = measure_switch(*rt, opt.switches);
      sj[k] = measure_spawn_join(*rt, opt.spawns);
      auto lat = measure_wakes(*rt, opt.wakes);
      p50[k] = percentile(lat, 50);
      b.switch_ns = std::min(b.switch_ns, sw[k]);
      b.spawn_join_ns = std::min(b.spawn_join_ns, sj[k]);
      b.wake_p50_ns = std::min(b.wake_p50_ns, p50[k]);
      b.wake_p99_ns = std::min(b.wake_p99_ns, percentile(lat, 99));
      b.samples = lat.size();
      b.preemptions += rt->counters(0).preemptions + rt->counters(1).preemptions;
    }
    switch_ratio.push_back(sw[1] / sw[0]);
    spawn_ratio.push_back(sj[1] / sj[0]);
    wake_ratio.push_back(p50[1] / p50[0]);
  }
  const auto median = [](std::vector<double> v) {
    std::ranges::sort(v);
    return v[v.size() / 2];
  };
  const figures& off = best[0];
  const figures& on = best[1];
  fmt::print("{{\"bench\":\"reactor\",\"variant\":\"affine\",\"switch_ns\":{:.1f},\"spawn_join_ns\":{:.1f},"
             "\"wake_p50_ns\":{:.0f},\"wake_p99_ns\":{:.0f},\"samples\":{}}}\n",
             off.switch_ns, off.spawn_join_ns, off.wake_p50_ns, off.wake_p99_ns, off.samples);
  fmt::print("{{\"bench\":\"reactor\",\"variant\":\"affine-preempt\",\"switch_ns\":{:.1f},"
             "\"spawn_join_ns\":{:.1f},\"wake_p50_ns\":{:.0f},\"wake_p99_ns\":{:.0f},\"samples\":{},"
             "\"pairs\":{},\"switch_vs_off\":{:.3f},\"spawn_join_vs_off\":{:.3f},\"wake_p50_vs_off\":{:.3f},"
             "\"preemptions\":{}}}\n",
             on.switch_ns, on.spawn_join_ns, on.wake_p50_ns, on.wake_p99_ns, on.samples, pairs, median(switch_ratio),
             median(spawn_ratio), median(wake_ratio), on.preemptions);
  {  // Reactors that sleep as soon as they are idle (spin_us = 0).
    auto rt = start(topo, 0);
    auto lat = measure_wakes(*rt, opt.wakes);
    fmt::print("{{\"bench\":\"reactor\",\"variant\":\"affine-sleeping\",\"wake_p50_ns\":{:.0f},"
               "\"wake_p99_ns\":{:.0f},\"samples\":{}}}\n",
               percentile(lat, 50), percentile(lat, 99), lat.size());
  }
  {
    const thread_figures t = measure_threads(opt.wakes, cpu0, cpu1);
    fmt::print("{{\"bench\":\"reactor\",\"variant\":\"thread-condvar\",\"switch_ns\":{:.1f},"
               "\"wake_p50_ns\":{:.0f},\"wake_p99_ns\":{:.0f},\"samples\":{}}}\n",
               t.switch_ns, t.wake_p50_ns, t.wake_p99_ns, 2 * opt.wakes - 1);
  }
  {  // Idle reactors, default spin (50 us), after a burst of work.
    auto rt = start(topo, 50);
    rt->run([] {});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t cpu0_ns = process_cpu_ns(), t0 = now_ns();
    std::this_thread::sleep_for(std::chrono::seconds(opt.idle_seconds));
    const double cpu = double(process_cpu_ns() - cpu0_ns), wall = double(now_ns() - t0);
    fmt::print("{{\"bench\":\"reactor\",\"variant\":\"affine-idle\",\"reactors\":{},\"seconds\":{},"
               "\"idle_cpu_pct\":{:.3f}}}\n",
               rt->cores(), opt.idle_seconds, 100.0 * cpu / wall / rt->cores());
  }
  return 0;
}
