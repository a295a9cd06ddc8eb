#pragma once
// DPDK's environment abstraction layer, initialised once per process, and
// the per-NUMA-node packet pools (DESIGN.md section 4).

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>

struct rte_mempool;

namespace affine::drivers::dpdk {

// Initialise the EAL with `args` (the [[port]] eal list), once: later calls
// return the first call's outcome. DPDK's own failures come back as one
// line that says what to do (e.g. no hugepages and no --no-huge).
std::expected<void, std::string> init_eal(std::span<const std::string> args);

// The arguments tests and in-process tools use on a machine without
// hugepages or PCI devices: --no-huge --no-pci --no-shconf, a small memory
// budget, quiet logs. Virtual devices are added afterwards with rte_vdev_init.
std::expected<void, std::string> init_eal_for_tests();

bool eal_ready() noexcept;

// The bytes of a whole frame at `mtu`: the Ethernet header, one VLAN tag and
// the CRC around an MTU-sized payload.
constexpr std::uint32_t frame_bytes(std::uint32_t mtu) { return mtu + 14 + 4 + 4; }

// The packet pool of a NUMA node for frames of up to `frame` bytes, created
// on first use (`mbufs` entries, with a per-lcore cache). One frame is one
// mbuf everywhere (RX without scatter, TX built in place): each buffer holds
// a whole frame, at least DPDK's default data room (2 KiB), so a jumbo MTU
// gets a pool of its own (9,022-byte buffers at MTU 9000). Node ids past the
// machine's fall back to SOCKET_ID_ANY.
inline constexpr unsigned default_pool_mbufs = 8191;
std::expected<rte_mempool*, std::string> packet_pool(unsigned node, unsigned mbufs = default_pool_mbufs,
                                                     std::uint32_t frame = frame_bytes(1500));

// Each packet pool made so far: its mbufs in use (rte_mempool_in_use_count:
// held by the stack, the driver's rings or in flight, cached ones
// excluded) and its size, for collect_metrics.
struct pool_usage {
  unsigned node = 0;
  std::uint32_t room = 0;  // bytes of data room a buffer
  unsigned in_use = 0;
  unsigned size = 0;
};
std::vector<pool_usage> packet_pool_usage();

// Make the calling thread an EAL lcore (rte_thread_register) so mempool
// caches work on it; reactors call this at start. Idempotent per thread.
std::expected<void, std::string> register_thread();

// For runtime_options::on_reactor_start: register_thread, logging a failure
// (the reactor then runs with uncached pools). The lcore is released when
// the thread ends.
void register_reactor(unsigned reactor);

}  // namespace affine::drivers::dpdk
