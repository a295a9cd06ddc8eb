// raw-dpdk: the same ping-pong as plain rte_eth_rx_burst/tx_burst loops on
// the EAL thread, the baseline this driver layer is measured against.

#include <cstdio>

#include "bench/driver/pingpong.hh"

namespace affine::bench::driver {

namespace {

constexpr std::uint16_t burst = 32;

void send_all(std::uint16_t port, rte_mbuf** pkts, std::uint16_t n) {
  std::uint16_t sent = 0;
  while (sent < n) sent += rte_eth_tx_burst(port, 0, pkts + sent, std::uint16_t(n - sent));
}

}  // namespace

bool raw_server(drivers::dpdk::dpdk_port& port) {
  const std::uint16_t id = port.port_id();
  rte_mbuf* pkts[burst];
  while (!stop_requested.load(std::memory_order_relaxed)) {
    const std::uint16_t n = rte_eth_rx_burst(id, 0, pkts, burst);
    if (n == 0) continue;
    if (is_stop(pkts[n - 1])) {
      rte_pktmbuf_free_bulk(pkts, n);
      break;
    }
    send_all(id, pkts, n);
  }
  return true;
}

bool raw_client(drivers::dpdk::dpdk_port& port, const run_config& cfg, client_result& out) {
  const std::uint16_t id = port.port_id();
  rte_mbuf* m = first_frame(port.pool(port.numa_node()), cfg.frame_bytes);
  if (m == nullptr) return false;
  const std::uint64_t total = cfg.warmup + cfg.round_trips;
  const std::uint64_t stall = rte_get_tsc_hz();  // a second without an answer: the peer is gone
  out.rtt_cycles.reserve(cfg.round_trips);
  std::uint64_t start = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == cfg.warmup) start = rte_rdtsc();
    stamp(m);
    send_all(id, &m, 1);
    std::uint16_t n = 0;
    const std::uint64_t sent_at = rte_rdtsc();
    while ((n = rte_eth_rx_burst(id, 0, &m, 1)) == 0) {
      if (rte_rdtsc() - sent_at > stall) {
        std::fprintf(stderr, "raw client: no answer for a second after %lu round trips\n", (unsigned long)i);
        return false;
      }
    }
    if (i >= cfg.warmup) out.rtt_cycles.push_back(rte_rdtsc() - stamp_of(m));
  }
  out.elapsed_cycles = rte_rdtsc() - start;
  rte_pktmbuf_free(m);
  return true;
}

}  // namespace affine::bench::driver
