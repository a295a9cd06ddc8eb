#pragma once
// The 64-byte ping-pong of `bench/run driver`: frame layout, and the two
// ways of running each side (this driver layer on a runtime, or a raw
// rte_eth_rx_burst/tx_burst loop on the EAL thread).

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "drivers/dpdk/port.hh"

namespace affine::bench::driver {

struct run_config {
  unsigned core = 0;             // topology core (reactor or EAL thread)
  std::uint64_t round_trips = 200'000;
  std::uint64_t warmup = 20'000;
  std::uint16_t frame_bytes = 64;
};

// The client's view of the run: one RTT in TSC cycles per measured round
// trip, and the wall time of the measured part.
struct client_result {
  std::vector<std::uint64_t> rtt_cycles;
  std::uint64_t elapsed_cycles = 0;
};

// Set by SIGTERM/SIGINT, or by the client's stop frame: the server stops
// echoing and closes its port.
inline std::atomic<bool> stop_requested{false};

// Frame: Ethernet header (broadcast, local experimental ethertype), the TSC
// stamp of the client's send, then a stop flag. The client ends a run with
// a stop frame and waits for the server to close before it disconnects:
// DPDK's memif unmaps a queue on disconnect while its peer may be inside
// rx_burst on it.
constexpr std::size_t stamp_offset = 14;
constexpr std::size_t stop_offset = 22;

inline bool is_stop(const rte_mbuf* m) { return *rte_pktmbuf_mtod_offset(m, const std::uint8_t*, stop_offset) != 0; }

inline void stamp(rte_mbuf* m) {
  const std::uint64_t now = rte_rdtsc();
  std::memcpy(rte_pktmbuf_mtod_offset(m, char*, stamp_offset), &now, sizeof now);
}
inline std::uint64_t stamp_of(const rte_mbuf* m) {
  std::uint64_t t;
  std::memcpy(&t, rte_pktmbuf_mtod_offset(m, const char*, stamp_offset), sizeof t);
  return t;
}
rte_mbuf* first_frame(rte_mempool* pool, std::uint16_t bytes);
// Send a stop frame, then wait (up to two seconds) for the server to close.
void stop_server(drivers::dpdk::dpdk_port& port, std::uint16_t frame_bytes);

// Each returns false (after printing why) when the run could not finish.
bool raw_server(drivers::dpdk::dpdk_port& port);
bool raw_client(drivers::dpdk::dpdk_port& port, const run_config& cfg, client_result& out);
bool driver_server(drivers::dpdk::dpdk_port& port, const run_config& cfg);
bool driver_client(drivers::dpdk::dpdk_port& port, const run_config& cfg, client_result& out);

}  // namespace affine::bench::driver
