// One timer fiber per core fires the deadlines of the TCP sockets homed on
// that core (and, on core 0, the ARP cache's; each core its reassembler's).
//
// The handshake that loses no deadline: settle() stores a socket's deadline,
// then reads wake_at and pokes the fiber (under timer_lock) when the new
// deadline is earlier. The fiber holds timer_lock from the moment it sets
// wake_at to "scanning" (all ones) until wait() releases it, so a poke
// either finds the fiber waiting (and wakes it) or happened before the scan
// (which then sees the new deadline).
//
// While any deadline is pending the fiber also wakes every timer_tick_ns:
// then a deadline set later than the next tick (a delayed ACK, an RTO) costs
// no poke. Without it a request/response flow pokes the fiber once per
// transaction (each new delayed ACK is earlier than the RTO it waits for),
// one fiber switch per packet; with it, at most 1/timer_tick_ns wakeups a
// second. With nothing pending the fiber sleeps until the next poke.

#include <rte_mbuf.h>

#include <algorithm>
#include <mutex>

#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/wire/ethernet.hh"

namespace affine::stack {

namespace {
constexpr std::uint64_t timer_tick_ns = 10'000'000;
}  // namespace

void stack::home(tcp_socket* s) {
  per_core& pc = *cores_[s->home_core()];
  s->ref();
  std::lock_guard g(pc.timer_lock);
  pc.timed.push_back(s);
}

void stack::poke_timer(per_core& pc) {
  std::lock_guard g(pc.timer_lock);
  pc.timer_wait.notify_one();
}

void stack::timer_loop(per_core& pc) {
  std::vector<tcp_socket*> due;
  for (;;) {
    pc.timer_lock.lock();
    if (pc.stopping) {
      pc.timer_lock.unlock();
      return;
    }
    pc.wake_at.store(UINT64_MAX, std::memory_order_seq_cst);
    const std::uint64_t now = now_ns();
    std::uint64_t arp_deadline = UINT64_MAX;
    if (pc.index == 0) {
      std::lock_guard g(arp_lock_);
      arp_deadline = arp_.next_deadline();
    }
    std::uint64_t earliest = std::min(pc.reasm.next_deadline(), arp_deadline);
    std::erase_if(pc.timed, [&](tcp_socket* s) {
      if (s->retired.load(std::memory_order_acquire)) {
        s->unref();
        return true;
      }
      const std::uint64_t d = s->deadline.load(std::memory_order_seq_cst);
      if (d <= now) {
        s->ref();
        due.push_back(s);
      } else {
        earliest = std::min(earliest, d);
      }
      return false;
    });
    const bool other_work = pc.reasm.next_deadline() <= now || arp_deadline <= now;
    if (due.empty() && !other_work) {
      if (earliest != UINT64_MAX) earliest = std::min(earliest, now + timer_tick_ns);
      pc.wake_at.store(earliest, std::memory_order_seq_cst);
      pc.timer_wait.wait(pc.timer_lock, earliest, stop_mode::ignore);
      continue;
    }
    pc.timer_lock.unlock();

    for (tcp_socket* s : due) {
      s->lock.lock();
      if (s->conn.next_deadline() <= now) s->conn.on_timer(now);
      const settled what = settle(*s, now);
      s->lock.unlock();
      finish(*s, what);
      s->unref();
    }
    due.clear();
    pc.reasm.expire(now);
    if (pc.index == 0) {
      std::lock_guard g(arp_lock_);
      const arp_expiry e = arp_.expire(now);
      for (rte_mbuf* m : e.drop) {
        rte_pktmbuf_free(m);
        pc.counters.count(drop::arp_unresolved);
      }
      for (std::uint32_t ip : e.request) send_arp(pc, false, broadcast_mac, ip);
    }
  }
}

}  // namespace affine::stack
