#pragma once
// The narrow driver boundary (STYLE.md): what the stack sees of a port.
//
// A port has RX queues, each polled by one owner at a time (the reactor core
// the RX-queue plan gave it, or a busy-polling fiber holding the queue's
// try-lock: the NAPI analogue), and one TX queue per reactor core. Packets
// are DPDK mbufs from per-NUMA-node pools, on every port type (the DPDK PMDs
// and the in-process wire alike), so the stack has one packet type and no
// copies between driver and stack.

#include <array>
#include <atomic>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "affine/topology.hh"

struct rte_mbuf;
struct rte_mempool;

namespace affine::drivers {

using mac_address = std::array<std::uint8_t, 6>;

// What the port (and its PMD) can do. Software paths stand in for what is
// missing; the stack reads this once at start-up.
struct port_caps {
  bool rx_ipv4_checksum = false;  // RX checks IPv4 header checksums and flags the mbuf
  bool rx_l4_checksum = false;    // ... TCP and UDP checksums
  bool tx_ipv4_checksum = false;  // TX fills IPv4 header checksums
  bool tx_l4_checksum = false;    // ... TCP and UDP checksums
  bool tso = false;               // TCP segmentation offload
  bool multi_seg_tx = false;      // chained mbufs on TX
  bool rss = false;               // RSS over several RX queues
  bool rss_hash_in_mbuf = false;  // the flow hash arrives in mbuf->hash.rss
  bool rx_interrupts = false;     // an RX queue can wake a sleeping reactor
  bool flow_rules = false;        // rte_flow steering rules accepted
  unsigned max_rx_queues = 1;
  unsigned max_tx_queues = 1;
  std::uint32_t mtu = 1500;
  // The RSS key actually in use, as read back from the port (never assumed);
  // empty when the port has no RSS.
  std::vector<std::uint8_t> rss_key;
};

struct port_stats {
  std::uint64_t rx_packets = 0, rx_bytes = 0, rx_missed = 0, rx_errors = 0, rx_nombuf = 0;
  std::uint64_t tx_packets = 0, tx_bytes = 0, tx_errors = 0;
};

struct link_status {
  bool up = false;
  std::uint32_t speed_mbps = 0;
  bool full_duplex = false;
};

// The owner flag of one RX queue, with try-lock semantics: the reactor that
// owns the queue and a busy-polling fiber never poll it at the same time.
class rx_queue_owner {
 public:
  bool try_lock() noexcept { return !held_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }
  bool held() const noexcept { return held_.load(std::memory_order_relaxed); }

 private:
  alignas(64) std::atomic<bool> held_{false};
};

class port {
 public:
  virtual ~port() = default;

  virtual std::string_view name() const = 0;
  virtual const port_caps& caps() const = 0;
  virtual mac_address mac() const = 0;
  virtual unsigned rx_queue_count() const = 0;
  virtual unsigned tx_queue_count() const = 0;
  // The NUMA node the port is attached to (0 when unknown).
  virtual unsigned numa_node() const = 0;

  // Precondition: the caller holds owner(q).
  virtual std::uint16_t rx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) = 0;
  // Precondition: q is the calling core's TX queue (one writer per queue).
  // Returns how many the port took; the caller still owns the rest.
  virtual std::uint16_t tx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) = 0;
  // Packet memory for a core on `node`.
  virtual rte_mempool* pool(unsigned node) = 0;

  rx_queue_owner& owner(unsigned q) { return owners_[q]; }

  // Interrupt mode for sleeping reactors. A port without interrupts returns
  // false / -1 and the reactor naps instead.
  virtual bool rx_interrupt_enable(unsigned /*q*/) { return false; }
  virtual void rx_interrupt_disable(unsigned /*q*/) {}
  virtual int rx_interrupt_fd(unsigned /*q*/) const { return -1; }
  // Add (or remove) queue q's interrupt to an epoll set; false where the
  // port has no interrupts.
  virtual bool rx_interrupt_watch(unsigned /*q*/, int /*epoll_fd*/, bool /*add*/) { return false; }
  // After a wake-up: consume what fired in that epoll set (event counters
  // that would otherwise keep it readable).
  virtual void rx_interrupt_drain(int /*epoll_fd*/) {}
  // Spread RSS buckets over the plan's cores. Nothing to do (and no error)
  // where the port has no RSS redirection table.
  virtual std::expected<void, std::string> program_reta(std::span<const rxq_assignment> /*plan*/) { return {}; }
  // The RSS redirection table in effect (read back from the port): bucket
  // to RX queue. Empty where the port has no RSS table.
  virtual std::vector<std::uint16_t> rss_table() const { return {}; }

  virtual port_stats stats() const = 0;
  virtual std::vector<std::pair<std::string, std::uint64_t>> xstats() const { return {}; }
  virtual link_status link() const = 0;

 protected:
  explicit port(unsigned rx_queues) : owners_(rx_queues) {}

 private:
  std::vector<rx_queue_owner> owners_;
};

}  // namespace affine::drivers
