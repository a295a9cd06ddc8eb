// driver_pingpong: one side of the `bench/run driver` ping-pong over
// net_memif. The server echoes every frame; the client sends one 64-byte
// frame at a time, measures its round trip, and prints one JSON line:
//
//   driver_pingpong --role server|client --variant affine-driver|raw-dpdk
//                   --socket PATH --core N [--round-trips N] [--warmup N]

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "bench/driver/pingpong.hh"
#include "bench/reactor/bench_util.hh"
#include "drivers/dpdk/eal.hh"

namespace affine::bench::driver {

rte_mbuf* first_frame(rte_mempool* pool, std::uint16_t bytes) {
  rte_mbuf* m = pool != nullptr ? rte_pktmbuf_alloc(pool) : nullptr;
  if (m == nullptr || rte_pktmbuf_append(m, bytes) == nullptr) {
    std::fprintf(stderr, "no mbuf for the first frame\n");
    if (m != nullptr) rte_pktmbuf_free(m);
    return nullptr;
  }
  auto* f = rte_pktmbuf_mtod(m, std::uint8_t*);
  std::memset(f, 0, bytes);
  std::memset(f, 0xff, 6);
  f[6] = 0x02;
  f[12] = 0x88, f[13] = 0xb5;  // IEEE 802 local experimental ethertype
  return m;
}

void stop_server(drivers::dpdk::dpdk_port& port, std::uint16_t frame_bytes) {
  rte_mbuf* m = first_frame(port.pool(port.numa_node()), frame_bytes);
  if (m == nullptr) return;
  *rte_pktmbuf_mtod_offset(m, std::uint8_t*, stop_offset) = 1;
  if (port.tx_burst(0, &m, 1) != 1) rte_pktmbuf_free(m);
  for (int i = 0; i < 200 && port.link().up; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

namespace {

struct options {
  std::string role, variant, socket;
  run_config run;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "driver_pingpong: %s\nusage: driver_pingpong --role server|client --variant affine-driver|raw-dpdk "
               "--socket PATH --core N [--round-trips N] [--warmup N]\n",
               why);
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", a).c_str());
    const char* v = argv[++i];
    if (a == "--role") o.role = v;
    else if (a == "--variant") o.variant = v;
    else if (a == "--socket") o.socket = v;
    else if (a == "--core") o.run.core = unsigned(std::stoul(v));
    else if (a == "--round-trips") o.run.round_trips = std::stoull(v);
    else if (a == "--warmup") o.run.warmup = std::stoull(v);
    else usage(fmt::format("unknown option {}", a).c_str());
  }
  if (o.role != "server" && o.role != "client") usage("--role is server or client");
  if (o.variant != "affine-driver" && o.variant != "raw-dpdk") usage("--variant is affine-driver or raw-dpdk");
  if (o.socket.empty()) usage("--socket is required");
  if (o.run.round_trips == 0 || o.run.warmup == 0) usage("--round-trips and --warmup must be at least 1");
  return o;
}

bool wait_for_link(const drivers::dpdk::dpdk_port& port) {
  for (int i = 0; i < 1000; ++i) {
    if (port.link().up) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "%s: the memif peer never connected\n", std::string(port.name()).c_str());
  return false;
}

void print_result(const options& o, client_result& r) {
  const double us_per_cycle = 1e6 / double(rte_get_tsc_hz());
  const double seconds = double(r.elapsed_cycles) / double(rte_get_tsc_hz());
  std::printf(
      "{\"bench\":\"driver\",\"variant\":\"%s\",\"size_bytes\":%u,\"round_trips\":%lu,\"rtt_p50_us\":%.3f,"
      "\"rtt_p99_us\":%.3f,\"rtt_p999_us\":%.3f,\"round_trips_per_s\":%.0f}\n",
      o.variant.c_str(), unsigned(o.run.frame_bytes), (unsigned long)r.rtt_cycles.size(),
      percentile(r.rtt_cycles, 50) * us_per_cycle, percentile(r.rtt_cycles, 99) * us_per_cycle,
      percentile(r.rtt_cycles, 99.9) * us_per_cycle, double(o.run.round_trips) / seconds);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  std::signal(SIGTERM, [](int) { stop_requested.store(true); });
  std::signal(SIGINT, [](int) { stop_requested.store(true); });

  auto topo = topology::from_system();
  if (!topo || o.run.core >= topo->core_count()) usage("--core is not a core of this machine");
  const std::string lcore = std::to_string(topo->core(core_id{o.run.core}).os_cpu);
  const std::vector<std::string> eal{"--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "256",
                                     "-l", lcore, "--log-level=lib.eal:error", "--log-level=pmd:warning"};
  if (auto r = drivers::dpdk::init_eal(eal); !r) {
    std::fprintf(stderr, "%s\n", r.error().c_str());
    return 1;
  }
  auto port = drivers::dpdk::dpdk_port::open(
      {.device = fmt::format("net_memif0,role={},socket={},socket-abstract=no,id=0", o.role, o.socket),
       .rss = drivers::dpdk::rss_mode::off,
       .rx_interrupts = false});
  if (!port) {
    std::fprintf(stderr, "%s\n", port.error().c_str());
    return 1;
  }
  if (!wait_for_link(**port)) return 1;

  const bool driver = o.variant == "affine-driver";
  bool ok;
  if (o.role == "server") {
    ok = driver ? driver_server(**port, o.run) : raw_server(**port);
  } else {
    client_result r;
    ok = driver ? driver_client(**port, o.run, r) : raw_client(**port, o.run, r);
    stop_server(**port, o.run.frame_bytes);
    if (ok) print_result(o, r);
  }
  return ok ? 0 : 1;
}

}  // namespace affine::bench::driver

int main(int argc, char** argv) { return affine::bench::driver::main(argc, argv); }
