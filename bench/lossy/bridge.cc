// lossy_bridge: the impairing L2 bridge of `bench/run lossy`. Two
// net_af_packet ports, one on each interface it joins; every frame read on
// one is sent on the other through one drivers::wire::direction per way
// (the in-process wire's seeded loss, bursts, delay, jitter and rate limit),
// so a kernel peer and affine's stack meet the same impairment frame for
// frame. SIGTERM or SIGINT ends it; it then prints one JSON line of what
// each direction forwarded and dropped, by reason, and exits 0.
//
//   lossy_bridge --iface-a IF --iface-b IF [--seed N] [--loss-pct P] [--burst G2B,B2G]
//                [--delay-us U] [--jitter-us U] [--rate-mbit M] [--queue-kb K] [--ecn-mark-kb K] [--core CPU]

#include <sched.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/lossy/options.hh"
#include "drivers/dpdk/eal.hh"
#include "drivers/dpdk/port.hh"
#include "drivers/wire/direction.hh"

namespace affine::bench::lossy {

namespace {

namespace wire = drivers::wire;
using drivers::dpdk::dpdk_port;

std::atomic<bool> stop_requested{false};
constexpr std::uint16_t burst = 32;
// With nothing due, the longest sleep: a stop signal that lands between the
// loop's check and the sleep waits at most this long.
constexpr std::uint64_t longest_sleep_ns = 100'000'000;
// Where the ports have no socket to sleep on, the nap between looks.
constexpr std::uint64_t nap_ns = 50'000;

std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000 + std::uint64_t(ts.tv_nsec);
}

// One way across: frames read on `from`, impaired by `dir`, sent on `to`.
struct leg {
  const char* name;
  dpdk_port& from;
  dpdk_port& to;
  wire::direction dir;
  std::uint64_t forwarded = 0;
  std::uint64_t tx_full = 0;  // due, but `to`'s TX ring had no room
};

unsigned take(leg& l, std::uint64_t now) {
  rte_mbuf* pkts[burst];
  const std::uint16_t n = l.from.rx_burst(0, pkts, burst);
  if (n > 0) l.dir.send(pkts, n, now);
  return n;
}

unsigned give(leg& l, std::uint64_t now) {
  rte_mbuf* pkts[burst];
  const std::uint16_t n = l.dir.receive(pkts, burst, now);
  const std::uint16_t sent = n > 0 ? l.to.tx_burst(0, pkts, n) : 0;
  l.forwarded += sent;
  l.tx_full += n - sent;
  for (std::uint16_t i = sent; i < n; ++i) rte_pktmbuf_free(pkts[i]);
  return n;
}

// Two cores carry both endpoints and this bridge: a bridge that polled
// without pause would take a whole core from the stacks it carries for.
// So with nothing read and nothing due it sleeps until the next frame in
// flight is due, or until either port's packet socket turns readable
// (drivers/dpdk/packet_socket.hh: readable while the RX ring holds a
// frame), whichever comes first.
class idle_sleep {
 public:
  explicit idle_sleep(std::span<dpdk_port* const> ports) : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
    sockets_ = epoll_ >= 0;
    for (dpdk_port* p : ports) sockets_ = sockets_ && p->rx_interrupt_enable(0) && p->rx_interrupt_watch(0, epoll_, true);
    if (!sockets_) std::fprintf(stderr, "lossy_bridge: no packet socket to sleep on: napping %lu us\n", nap_ns / 1000);
    // A sleep until a frame is due should end when it is due: the default
    // timer slack (50 us) would add that much to a frame's delay.
    ::prctl(PR_SET_TIMERSLACK, 1UL);
  }
  ~idle_sleep() {
    if (epoll_ >= 0) ::close(epoll_);
  }
  idle_sleep(const idle_sleep&) = delete;
  idle_sleep& operator=(const idle_sleep&) = delete;

  void until(std::optional<std::uint64_t> due, std::uint64_t now) {
    std::uint64_t ns = due ? (*due > now ? *due - now : 0) : longest_sleep_ns;
    if (!sockets_) ns = std::min(ns, nap_ns);
    if (ns == 0) return;
    const timespec t{time_t(ns / 1'000'000'000), long(ns % 1'000'000'000)};
    if (!sockets_) {
      clock_nanosleep(CLOCK_MONOTONIC, 0, &t, nullptr);
      return;
    }
    epoll_event ev[2];
    ::epoll_pwait2(epoll_, ev, 2, &t, nullptr);  // EINTR: a signal, seen by the loop
  }

 private:
  int epoll_;
  bool sockets_ = false;
};

std::optional<std::uint64_t> earliest(std::optional<std::uint64_t> x, std::optional<std::uint64_t> y) {
  if (!x) return y;
  if (!y) return x;
  return std::min(*x, *y);
}

std::string leg_json(const leg& l) {
  const wire::direction_stats s = l.dir.stats();
  std::string dropped;
  for (std::size_t r = 0; r < std::size_t(wire::drop_reason::count); ++r)
    dropped += fmt::format("\"{}\":{},", wire::drop_reason_name(wire::drop_reason(r)), s.dropped[r]);
  return fmt::format(
      "\"{}\":{{\"received\":{},\"forwarded\":{},\"forwarded_bytes\":{},\"duplicated\":{},\"reordered\":{},"
      "\"ce_marked\":{},\"in_flight\":{},\"dropped\":{{{}\"tx_full\":{}}},\"rx_missed\":{}}}",
      l.name, s.sent, l.forwarded, s.delivered_bytes, s.duplicated, s.reordered, s.ce_marked, l.dir.in_flight(), dropped,
      l.tx_full, l.from.stats().rx_missed);
}

std::vector<std::string> eal_args(const bridge_options& o) {
  return {"--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "256",
          fmt::format("--file-prefix=affine-lossy-bridge-{}", ::getpid()),
          "-l", std::to_string(o.core.value_or(0)),
          "--log-level=lib.eal:error", "--log-level=pmd:warning",
          fmt::format("--vdev=net_af_packet0,iface={}", o.iface_a),
          fmt::format("--vdev=net_af_packet1,iface={}", o.iface_b)};
}

std::unique_ptr<dpdk_port> open_port(const char* name) {
  auto p = dpdk_port::open({.device = name, .rss = drivers::dpdk::rss_mode::off});
  if (!p) {
    std::fprintf(stderr, "lossy_bridge: %s\n", p.error().c_str());
    return nullptr;
  }
  return std::move(*p);
}

int run(const bridge_options& o) {
  // The EAL pins this thread to its lcore's CPU; without --core the bridge
  // keeps the whole machine, as the endpoints' kernel threads have it.
  cpu_set_t all;
  const bool have_all = sched_getaffinity(0, sizeof all, &all) == 0;
  if (o.core && (!have_all || !CPU_ISSET(*o.core, &all))) {
    std::fprintf(stderr, "lossy_bridge: --core %u: not a CPU this process may run on\n", *o.core);
    return 2;
  }
  if (auto r = drivers::dpdk::init_eal(eal_args(o)); !r) {
    std::fprintf(stderr, "lossy_bridge: %s\n", r.error().c_str());
    return 1;
  }
  if (!o.core && have_all) sched_setaffinity(0, sizeof all, &all);

  auto a = open_port("net_af_packet0");
  auto b = open_port("net_af_packet1");
  if (!a || !b) return 1;
  const std::uint32_t max_frame = drivers::dpdk::frame_bytes(1500);
  leg ab{"a_to_b", *a, *b, wire::direction(o.each_direction, o.seed, 0, b->pool(b->numa_node()), max_frame)};
  leg ba{"b_to_a", *b, *a, wire::direction(o.each_direction, o.seed, 1, a->pool(a->numa_node()), max_frame)};
  dpdk_port* ports[] = {a.get(), b.get()};
  idle_sleep sleep(ports);
  std::fprintf(stderr, "lossy_bridge: forwarding %s <-> %s\n", o.iface_a.c_str(), o.iface_b.c_str());

  while (!stop_requested.load(std::memory_order_relaxed)) {
    std::uint64_t now = now_ns();
    unsigned moved = take(ab, now) + take(ba, now);
    now = now_ns();
    moved += give(ab, now) + give(ba, now);
    if (moved == 0) sleep.until(earliest(ab.dir.next_arrival(), ba.dir.next_arrival()), now_ns());
  }
  std::printf("{\"bench\":\"lossy-bridge\",\"seed\":%lu,%s,%s}\n", (unsigned long)o.seed, leg_json(ab).c_str(),
              leg_json(ba).c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace

}  // namespace affine::bench::lossy

int main(int argc, char** argv) {
  namespace lossy = affine::bench::lossy;
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto o = lossy::parse_bridge_options(args);
  if (!o) {
    std::fprintf(stderr, "lossy_bridge: %s\n%s", o.error().c_str(), lossy::bridge_usage().c_str());
    return 2;
  }
  // No SA_RESTART: the signal ends the idle sleep at once.
  struct sigaction sa {};
  sa.sa_handler = [](int) { lossy::stop_requested.store(true); };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  return lossy::run(*o);
}
