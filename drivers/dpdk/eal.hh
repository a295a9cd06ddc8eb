#pragma once
// DPDK's environment abstraction layer, initialised once per process, and
// the per-NUMA-node packet pools (DESIGN.md section 4).

#include <expected>
#include <span>
#include <string>

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

// The packet pool of a NUMA node, created on first use (`mbufs` entries of
// default data room, with a per-lcore cache). Node ids past the machine's
// fall back to SOCKET_ID_ANY.
std::expected<rte_mempool*, std::string> packet_pool(unsigned node, unsigned mbufs = 8191);

// Make the calling thread an EAL lcore (rte_thread_register) so mempool
// caches work on it; reactors call this at start. Idempotent per thread.
std::expected<void, std::string> register_thread();

// For runtime_options::on_reactor_start: register_thread, logging a failure
// (the reactor then runs with uncached pools). The lcore is released when
// the thread ends.
void register_reactor(unsigned reactor);

}  // namespace affine::drivers::dpdk
