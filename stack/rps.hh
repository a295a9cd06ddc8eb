#pragma once
// Per-RX-queue packet steering (seed 003, DESIGN.md section 1 P3): with
// fewer RX queues than cores, the core that polls a queue parses each frame
// only as far as its flow hash and hands it to the core policy::rps_target
// picks, per the queue's mode ([[port.rxq]] rps):
//   off   the RX core processes its packets (nothing here runs);
//   hash  kernel RPS: a core by flow hash;
//   flow  RFS: the core where the flow's reader last ran;
//   idle  seed 003: an idle core sharing the LLC with that reader's core,
//         else the reader's core.
// The target core takes the batch from its bounded backlog ring in its
// reactor's poll rung (a poller with an eventfd, so a sleeping core wakes).
// A full ring drops the packet and counts it: never unbounded.
//
// "Where the reader last ran" is the kernel's rps_sock_flow_table: a table
// indexed by flow hash that each read updates (note_reader), so the RX core
// needs no flow-table lookup.

#include <rte_mbuf.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "affine/runtime.hh"
#include "affine/topology.hh"
#include "reactor/policy/rps.hh"
#include "stack/counters.hh"

namespace affine::stack {

// The flow hash both sides agree on: the RX path computes it from a frame
// (destination = local), a socket from its own 4-tuple.
std::uint32_t flow_hash(std::uint32_t local_ip, std::uint16_t local_port, std::uint32_t remote_ip,
                        std::uint16_t remote_port) noexcept;
// A received Ethernet frame's flow hash: IPv4 TCP or UDP, not a fragment.
// None: the RX core keeps it (ARP, ICMP, fragments, anything malformed —
// input counts those).
std::optional<std::uint32_t> frame_flow_hash(std::span<const std::byte> frame) noexcept;

class rps {
 public:
  using process_fn = std::function<void(unsigned core, std::span<rte_mbuf*> pkts)>;
  static constexpr unsigned backlog_capacity = 4096;  // packets per core; a power of two

  // modes[q]: queue q's mode. `process` runs a batch on a core (the stack's
  // input); counters[c] is core c's (the rps_* fields). Registers a backlog
  // poller on every reactor.
  rps(runtime& rt, std::vector<policy::rps_mode> modes, process_fn process, std::vector<core_counters*> counters);
  ~rps();  // removes the pollers; frees what the rings still hold
  rps(const rps&) = delete;
  rps& operator=(const rps&) = delete;

  bool steers(unsigned queue) const { return queue < modes_.size() && modes_[queue] != policy::rps_mode::off; }
  // On RX core `core`, for a batch from `queue`: packets for other cores go
  // to their backlogs; those this core keeps are moved to the front of
  // `pkts`, their count returned. Precondition: in the reactor of `core`.
  std::size_t steer(unsigned core, unsigned queue, std::span<rte_mbuf*> pkts);
  // Processes what `core`'s backlog ring holds (one batch); returns how
  // many. Precondition: on `core` (a busy-polling reader there).
  unsigned drain(unsigned core);
  // The flow's reader runs on `core` now.
  void note_reader(std::uint32_t flow_hash, unsigned core) noexcept;

 private:
  class backlog;
  static constexpr std::size_t reader_slots = 4096;  // a power of two

  void hand_over(unsigned from, unsigned to, std::span<rte_mbuf*> pkts);

  runtime& rt_;
  std::vector<policy::rps_mode> modes_;
  std::vector<core_id> topo_of_;  // reactor index -> topology core
  std::vector<int> reactor_of_;   // topology core -> reactor index, -1
  process_fn process_;
  std::unique_ptr<std::atomic<std::int32_t>[]> readers_;  // flow hash slot -> reactor index, -1
  std::vector<std::unique_ptr<backlog>> backlogs_;
  std::vector<core_counters*> counters_;
  std::vector<std::vector<std::vector<rte_mbuf*>>> scratch_;  // [rx core][target core]: one batch's hand-overs
};

}  // namespace affine::stack
