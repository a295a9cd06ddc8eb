#pragma once
// What one reactor core of a stack owns: its counters, its fragment
// reassembly, its TX queue and packet pool, and the timer fiber of the
// sockets homed on it. Reached only on that core, except the timer list
// (under timer_lock) and the counters (single writer, relaxed atomics).

#include <atomic>
#include <cstdint>
#include <vector>

#include "affine/fiber.hh"
#include "affine/sync.hh"
#include "drivers/poller.hh"
#include "stack/counters.hh"
#include "stack/ip/reassembly.hh"
#include "stack/stack.hh"
#include "stack/tcp_socket.hh"

namespace affine::stack {

struct stack::per_core {
  per_core(unsigned idx, const reassembly_config& rc, drivers::tx_batch& tx_batch, rte_mempool* mp)
      : index(idx), reasm(rc), tx(tx_batch), pool(mp) {}

  unsigned index;
  core_counters counters;
  reassembly reasm;
  drivers::tx_batch& tx;
  int rx_queue = -1;  // the RX queue of the batch being processed; -1: an RPS backlog
  rte_mempool* pool;
  std::uint16_t ip_id = 0;
  // The flow this core's TCP input found last, with a reference
  // (stack::lock_flow); let go when it leaves the table on this core, when
  // another flow takes its place, and with the stack.
  tcp_socket* last_flow = nullptr;
  flow_tuple last_tuple{};
  // The socket whose settle waits for the end of the RX batch being
  // processed (stack::settle_later), with a reference; null between batches.
  tcp_socket* batched = nullptr;
  bool batch_of_one = false;  // the RX batch being processed holds one packet: nothing to wait for
  // The last next hop this core resolved, copied out of the shared ARP
  // cache: good while the cache's changes() count and the answer's
  // freshness last (stack::transmit), so a flow's segments skip its lock.
  std::uint32_t hop_ip = 0;
  mac_address hop_mac{};
  std::uint64_t hop_fresh_until = 0;
  std::uint64_t hop_changes = 0;

  // Timers of the sockets homed here: see timer_fiber.cc for the handshake.
  spinlock timer_lock;
  wait_queue timer_wait;                    // under timer_lock
  std::vector<tcp_socket*> timed;           // under timer_lock; a reference each
  bool stopping = false;                    // under timer_lock
  std::atomic<std::uint64_t> wake_at{0};    // when the timer fiber wakes next
  fiber_handle timer_fiber;
};

}  // namespace affine::stack
