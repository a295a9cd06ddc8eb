// bench/run stall: the time a spinning thread loses on each CPU without the
// guest's scheduler running anything else in its place: interrupts, and on
// a VM the hypervisor's exits and preemptions of the virtual CPU. A thread
// pinned to each CPU reads CLOCK_MONOTONIC back to back for --seconds; a gap
// of a microsecond or more between two reads is a stall. The thread's own
// run-queue delay (/proc/thread-self/schedstat) over the same time is the
// part of it other threads of this kernel took.
//
//   {"bench":"stall","cpu":N,"seconds":S,"stalls_per_s":{"1-5us":..,"5-20us":..,"20-50us":..,
//    "50-1000us":..,"1ms+":..},"lost_pct":..,"run_delay_pct":..,"longest_us":..}
//
// Any latency quantile whose share of transactions is near (stalls a
// second of 20 us or more) x (transactions in flight) / (transactions a
// second) sits on the edge of these stalls (docs/tuning.md, "What
// sched-001's p99 measures").
//
// --rr-per-s R (repeatable) adds, after the CPUs' lines, the floor these
// stalls put under one request/response flow at R transactions a second
// (floor.hh: the CPUs' stalls merged, the flow held up by each):
//
//   {"bench":"stall","rr_floor_per_s":R,"cpus":[..],"transactions":..,"lengthened_pct":..,
//    "p99_us":..,"p999_us":..,"p9999_us":..}

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include <charconv>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/stall/floor.hh"
#include "reactor/cpu_share.hh"

namespace {

std::uint64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return std::uint64_t(t.tv_sec) * 1'000'000'000ULL + std::uint64_t(t.tv_nsec);
}

// This thread's run-queue delay so far (the reactor's own reader of
// /proc/thread-self/schedstat, reactor/cpu_share.hh); 0 where there is none.
std::uint64_t run_delay_ns(int fd) {
  std::uint64_t delay = 0, runs = 0;
  return fd >= 0 && affine::detail::read_schedstat(fd, delay, runs) ? delay : 0;
}

constexpr std::array<std::uint64_t, 5> class_below_ns = {5'000, 20'000, 50'000, 1'000'000, ~0ULL};
constexpr std::array<std::string_view, 5> class_name = {"1-5us", "5-20us", "20-50us", "50-1000us", "1ms+"};

struct cpu_result {
  bool pinned = false;
  std::array<std::uint64_t, 5> stalls{};
  std::uint64_t lost_ns = 0, longest_ns = 0, delay_ns = 0, wall_ns = 0;
  std::uint64_t start_ns = 0;
  std::vector<affine::bench::stall::interval> each;  // sized before the probe (no page faults in it); the first ones
  std::size_t kept = 0;
};

void probe(unsigned cpu, double seconds, cpu_result& r) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  r.pinned = ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
  if (!r.pinned) return;
  const int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);  // this thread's
  const std::uint64_t delay0 = run_delay_ns(fd);
  const std::uint64_t start = now_ns(), end = start + std::uint64_t(seconds * 1e9);
  r.start_ns = start;
  std::uint64_t prev = start;
  while (prev < end) {
    const std::uint64_t t = now_ns();
    const std::uint64_t gap = t - prev;
    prev = t;
    if (gap < 1'000) continue;
    if (r.kept < r.each.size()) r.each[r.kept++] = {t - gap, t};
    std::size_t c = 0;
    while (gap >= class_below_ns[c]) ++c;
    ++r.stalls[c];
    r.lost_ns += gap;
    if (gap > r.longest_ns) r.longest_ns = gap;
  }
  r.wall_ns = prev - start;
  r.delay_ns = run_delay_ns(fd) - delay0;
  if (fd >= 0) ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  std::vector<unsigned> cpus;
  std::vector<double> rr_rates;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 < argc && a == "--seconds") {
      seconds = std::strtod(argv[++i], nullptr);
    } else if (i + 1 < argc && a == "--cpu") {
      const std::string_view v = argv[++i];
      unsigned cpu = 0;
      const auto r = std::from_chars(v.data(), v.data() + v.size(), cpu);
      if (r.ec != std::errc{} || r.ptr != v.data() + v.size() || cpu >= CPU_SETSIZE) {
        fmt::print(stderr, "stall_probe: --cpu {}: not a CPU number (0 to {})\n", v, CPU_SETSIZE - 1);
        return 2;
      }
      cpus.push_back(cpu);
    } else if (i + 1 < argc && a == "--rr-per-s") {
      const double rate = std::strtod(argv[++i], nullptr);
      if (!(rate >= 1 && rate <= 1e9)) {
        fmt::print(stderr, "stall_probe: --rr-per-s {}: not a rate in [1, 1e9] transactions a second\n", argv[i]);
        return 2;
      }
      rr_rates.push_back(rate);
    } else {
      fmt::print(stderr, "usage: stall_probe [--seconds S] [--cpu N]... [--rr-per-s R]... (default: 3 s on every CPU it may run on)\n");
      return 2;
    }
  }
  if (!(seconds > 0 && seconds <= 3600)) {
    fmt::print(stderr, "stall_probe: --seconds must be in (0, 3600]\n");
    return 2;
  }
  if (cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  std::vector<cpu_result> results(cpus.size());
  // Room for 50,000 stalls a second (some 3,000 a CPU here), written
  // before the probe so that it takes no page fault of its own.
  if (!rr_rates.empty())
    for (cpu_result& r : results) r.each.assign(std::size_t(std::min(seconds, 60.0) * 50'000), {});
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < cpus.size(); ++i)
      threads.emplace_back([&, i] { probe(cpus[i], seconds, results[i]); });
  }
  int rc = 0;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const cpu_result& r = results[i];
    if (!r.pinned || r.wall_ns == 0) {
      fmt::print("{{\"bench\":\"stall\",\"cpu\":{},\"error\":\"cannot run on this CPU\"}}\n", cpus[i]);
      rc = 1;
      continue;
    }
    const double s = double(r.wall_ns) / 1e9;
    std::string classes;
    for (std::size_t c = 0; c < class_name.size(); ++c)
      classes += fmt::format("{}\"{}\":{:.0f}", c ? "," : "", class_name[c], double(r.stalls[c]) / s);
    fmt::print(
        "{{\"bench\":\"stall\",\"cpu\":{},\"seconds\":{:.2f},\"stalls_per_s\":{{{}}},\"lost_pct\":{:.2f},"
        "\"run_delay_pct\":{:.2f},\"longest_us\":{:.1f}}}\n",
        cpus[i], s, classes, 100.0 * double(r.lost_ns) / double(r.wall_ns),
        100.0 * double(r.delay_ns) / double(r.wall_ns), double(r.longest_ns) / 1e3);
  }
  if (rc != 0 || rr_rates.empty()) return rc;
  std::vector<affine::bench::stall::interval> all;
  std::uint64_t from = 0, to = ~0ULL;  // the time every CPU was probed
  std::string cpu_list;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const cpu_result& r = results[i];
    all.insert(all.end(), r.each.begin(), r.each.begin() + std::ptrdiff_t(r.kept));
    from = std::max(from, r.start_ns);
    to = std::min(to, r.start_ns + r.wall_ns);
    if (r.kept == r.each.size()) rc = 1;  // more stalls than room: the floor would miss some
    cpu_list += fmt::format("{}{}", i ? "," : "", cpus[i]);
  }
  const auto merged = affine::bench::stall::merge_stalls(std::move(all));
  for (double rate : rr_rates) {
    if (rc != 0) {
      fmt::print("{{\"bench\":\"stall\",\"rr_floor_per_s\":{:.0f},\"error\":\"more stalls than the probe keeps\"}}\n", rate);
      continue;
    }
    const auto f = affine::bench::stall::model_rr_floor(merged, from, to, rate);
    fmt::print(
        "{{\"bench\":\"stall\",\"rr_floor_per_s\":{:.0f},\"cpus\":[{}],\"transactions\":{},\"lengthened_pct\":{:.3f},"
        "\"p99_us\":{:.2f},\"p999_us\":{:.2f},\"p9999_us\":{:.2f}}}\n",
        rate, cpu_list, f.transactions, f.transactions ? 100.0 * double(f.lengthened) / double(f.transactions) : 0.0,
        f.p99_us, f.p999_us, f.p9999_us);
  }
  return rc;
}
