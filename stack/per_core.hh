#pragma once
// What one reactor core of a stack owns: its counters, its fragment
// reassembly, its TX queue and packet pool, and the timer fiber of the
// sockets homed on it. Reached only on that core, except the rearm list
// (lock-free), the timer fiber's wait (timer_lock) and the counters (single
// writer, relaxed atomics).

#include <atomic>
#include <cstdint>
#include <vector>

#include "affine/fiber.hh"
#include "affine/sync.hh"
#include "affine/time.hh"
#include "drivers/poller.hh"
#include "reactor/timer_wheel.hh"
#include "stack/counters.hh"
#include "stack/ip/reassembly.hh"
#include "stack/stack.hh"
#include "stack/tcp_socket.hh"

namespace affine::stack {

struct stack::per_core {
  per_core(unsigned idx, const reassembly_config& rc, drivers::tx_batch& tx_batch, rte_mempool* mp)
      : index(idx), reasm(rc), tx(tx_batch), pool(mp), wheel(now_ns()) {}

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
  // Whether IPv4 to df_dst goes without DF (stack::dont_fragment): good
  // while stack::narrow_paths_ stays the same, until df_fresh_until.
  std::uint32_t df_dst = 0;
  std::uint32_t df_narrow = 0;
  std::uint64_t df_fresh_until = 0;
  bool df_clear = false;
  // The same for IPv6 (stack::send_ipv6), keyed by the destination: good
  // while the neighbor cache's changes() and the interface's
  // (stack::v6_changes_) stay the same and the answer is fresh.
  ipv6_bytes hop6_dst{};
  mac_address hop6_mac{};
  std::uint64_t hop6_fresh_until = 0;
  std::uint64_t hop6_changes = 0;
  std::uint64_t hop6_v6_changes = 0;
  // The flow label of the last IPv6 flow this core sent on
  // (stack::flow_label): a SipHash costs 52-58 ns here, and a flow's
  // segments go out one after another (label 0: none yet).
  flow_tuple label_flow{};
  std::uint8_t label_protocol = 0;
  std::uint32_t label = 0;
  // The last destination ipv6_in found to be a unicast address of ours,
  // good while stack::v6_changes_ stays the same (never at first).
  ipv6_bytes ours6{};
  std::uint64_t ours6_v6_changes = ~std::uint64_t(0);

  // Timers of the sockets homed here: see timer_fiber.cc. The wheel, the
  // homed list and `due` belong to the timer fiber alone; other cores reach
  // it through the lock-free rearm list and a poke.
  spinlock timer_lock;
  wait_queue timer_wait;                    // under timer_lock
  bool stopping = false;                    // under timer_lock
  std::atomic<std::uint64_t> wake_at{0};    // when the timer fiber wakes next
  std::atomic<tcp_socket*> rearm_head{nullptr};  // sockets whose deadline moved earlier, a reference each
  timer_wheel wheel;                        // one entry per homed socket with a deadline
  std::vector<tcp_socket*> homed;           // the wheel's sockets, a reference each (for teardown)
  std::vector<tcp_socket*> due;             // filled by the wheel's callbacks, a reference each
  std::uint64_t advancing_now = 0;          // the `now` of the wheel's advance in progress
  // Written by the timer fiber, read by anyone (stack::timer_counts).
  std::atomic<std::uint64_t> timer_wakeups{0};
  std::atomic<std::uint64_t> timer_fired{0};  // wheel entries that came due (or moved later)
  std::atomic<std::uint64_t> timer_armed{0};  // entries on the wheel after the last wakeup
  fiber_handle timer_fiber;
};

}  // namespace affine::stack
