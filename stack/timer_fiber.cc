// One timer fiber per core fires the deadlines of the TCP sockets homed on
// that core (and, on core 0, the ARP cache's; each core its reassembler's).
//
// Each homed socket with a deadline has one entry on the core's timer wheel
// (reactor/timer_wheel.hh: O(1) arm and cancel, nothing visited that is not
// due), owned by this fiber alone. Other cores never touch the wheel: a
// settle that publishes a deadline earlier than the one the entry is armed
// for (`armed_for`) pushes the socket on this core's lock-free rearm list;
// a later deadline costs nothing (the entry fires, finds the deadline moved,
// and moves itself). No socket is scanned: a wakeup does what is due and
// what was pushed, and 100k idle connections cost nothing per wakeup.
//
// The handshake that loses no deadline, twice over:
//  - settle stores the deadline, then reads armed_for; the fiber stores
//    armed_for, then reads the deadline again (arm_homed). One of the two
//    sees the other's store, so an earlier deadline is either armed or
//    pushed.
//  - the fiber wakes for the wheel's next deadline, and at least every
//    timer_tick_ns while anything is armed; a settle pokes it (under
//    timer_lock) only when its deadline is earlier than that wakeup. The
//    fiber holds timer_lock from setting wake_at to "busy" (all ones) until
//    wait() releases it, so a poke either finds it waiting or comes before
//    it looks at the rearm list. With the tick, a request/response flow
//    (each new delayed ACK earlier than the RTO it waits for) pushes without
//    poking: at most 1/timer_tick_ns wakeups a second.

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

void on_wheel_entry(timer&, void* socket) {
  auto* s = static_cast<tcp_socket*>(socket);
  s->owner().wheel_fired(*s);
}

// A socket starts with a home: the wheel's reference, and a first rearm
// that puts it on the wheel.
void stack::home(tcp_socket* s) {
  s->ref();
  s->home_state.store(tcp_socket::homing::pending, std::memory_order_release);
  queue_rearm(*s);
  poke_timer(*cores_[s->home_core()]);
}

void stack::queue_rearm(tcp_socket& s) {
  const auto state = s.home_state.load(std::memory_order_acquire);
  if (state == tcp_socket::homing::none || state == tcp_socket::homing::gone) return;
  if (s.rearm_queued.exchange(true, std::memory_order_acq_rel)) return;  // already on the list
  s.ref();
  std::atomic<tcp_socket*>& head = cores_[s.home_core()]->rearm_head;
  tcp_socket* first = head.load(std::memory_order_relaxed);
  do {
    s.rearm_next = first;
  } while (!head.compare_exchange_weak(first, &s, std::memory_order_release, std::memory_order_relaxed));
}

void stack::poke_timer(per_core& pc) {
  std::lock_guard g(pc.timer_lock);
  pc.timer_wait.notify_one();
}

// Timer fiber only: the entry follows the published deadline.
void stack::arm_homed(per_core& pc, tcp_socket& s) {
  std::uint64_t d = s.deadline.load(std::memory_order_seq_cst);
  for (;;) {
    if (d == tcp::no_deadline) {
      pc.wheel.cancel(s.wheel_entry);
    } else if (!pc.wheel.armed(s.wheel_entry) || s.wheel_entry.expiry() != d) {
      pc.wheel.rearm(s.wheel_entry, d);
    }
    s.armed_for.store(d, std::memory_order_seq_cst);
    const std::uint64_t again = s.deadline.load(std::memory_order_seq_cst);
    if (again >= d) return;  // later: the entry fires first and moves itself
    d = again;
  }
}

// Timer fiber only: the wheel lets go of a retired socket.
void stack::unhome(per_core& pc, tcp_socket& s) {
  const auto state = s.home_state.load(std::memory_order_acquire);
  if (state == tcp_socket::homing::gone || state == tcp_socket::homing::none) return;
  pc.wheel.cancel(s.wheel_entry);
  if (state == tcp_socket::homing::homed) {
    tcp_socket* last = pc.homed.back();
    pc.homed[s.homed_index] = last;
    last->homed_index = s.homed_index;
    pc.homed.pop_back();
  }
  s.home_state.store(tcp_socket::homing::gone, std::memory_order_release);
  s.armed_for.store(0, std::memory_order_seq_cst);  // nothing pushes it again
  s.unref();                                        // the wheel's reference
}

void stack::drain_rearms(per_core& pc) {
  tcp_socket* s = pc.rearm_head.exchange(nullptr, std::memory_order_acquire);
  while (s != nullptr) {
    tcp_socket* next = s->rearm_next;  // before the flag: a new push rewrites the link
    s->rearm_queued.store(false, std::memory_order_seq_cst);
    if (s->retired.load(std::memory_order_seq_cst)) {
      unhome(pc, *s);
    } else if (s->home_state.load(std::memory_order_acquire) != tcp_socket::homing::gone) {
      if (s->home_state.load(std::memory_order_acquire) == tcp_socket::homing::pending) {
        s->homed_index = pc.homed.size();
        pc.homed.push_back(s);
        s->home_state.store(tcp_socket::homing::homed, std::memory_order_release);
      }
      arm_homed(pc, *s);
    }
    s->unref();  // the list's reference
    s = next;
  }
}

// From the wheel's advance: the entry is disarmed. Due: fire it after the
// advance; moved later: arm it there.
void stack::wheel_fired(tcp_socket& s) {
  per_core& pc = *cores_[s.home_core()];
  s.armed_for.store(tcp::no_deadline, std::memory_order_seq_cst);
  if (s.deadline.load(std::memory_order_seq_cst) <= pc.advancing_now) {
    s.ref();
    pc.due.push_back(&s);
    return;
  }
  arm_homed(pc, s);
}

void stack::timer_loop(per_core& pc) {
  for (;;) {
    pc.timer_lock.lock();
    if (pc.stopping) {
      pc.timer_lock.unlock();
      return;
    }
    pc.wake_at.store(UINT64_MAX, std::memory_order_seq_cst);
    pc.timer_wakeups.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t now = now_ns();
    drain_rearms(pc);
    pc.advancing_now = now;
    pc.timer_fired.fetch_add(pc.wheel.advance(now), std::memory_order_relaxed);
    pc.timer_armed.store(pc.wheel.size(), std::memory_order_relaxed);
    std::uint64_t arp_deadline = UINT64_MAX;
    if (pc.index == 0) {
      {
        std::lock_guard g(arp_lock_);
        arp_deadline = arp_.next_deadline();
      }
      arp_deadline = std::min(arp_deadline, ipv6_deadline());  // the neighbor cache's, DAD's, the routers'
    }
    const bool other_work = pc.reasm.next_deadline() <= now || arp_deadline <= now;
    if (pc.due.empty() && !other_work) {
      std::uint64_t earliest = std::min(pc.reasm.next_deadline(), arp_deadline);
      if (const auto w = pc.wheel.next_deadline()) earliest = std::min(earliest, std::max(*w, now));
      if (pc.wheel.size() > 0 || earliest != UINT64_MAX) earliest = std::min(earliest, now + timer_tick_ns);
      pc.wake_at.store(earliest, std::memory_order_seq_cst);
      // A push that came before wake_at was set found no waiter to poke.
      if (pc.rearm_head.load(std::memory_order_seq_cst) == nullptr)
        pc.timer_wait.wait(pc.timer_lock, earliest, stop_mode::ignore);
      else
        pc.timer_lock.unlock();
      continue;
    }
    pc.timer_lock.unlock();

    for (tcp_socket* s : pc.due) {
      s->lock.lock();
      if (s->conn.next_deadline() <= now) s->conn.on_timer(now);
      const settled what = settle(*s, now);
      s->lock.unlock();
      finish(*s, what);
      s->unref();
    }
    pc.due.clear();
    const std::uint32_t expired = pc.reasm.expire(now, [&](const fragment_key& key, std::span<const std::byte> first) {
      reassembly_expired(pc, key, first, now);
    });
    for (std::uint32_t i = 0; i < expired; ++i) pc.counters.count(drop::fragment_timeout);
    if (pc.index == 0) {
      std::lock_guard g(arp_lock_);
      const arp_expiry e = arp_.expire(now);
      for (rte_mbuf* m : e.drop) {
        rte_pktmbuf_free(m);
        pc.counters.count(drop::arp_unresolved);
      }
      for (std::uint32_t ip : e.request) send_arp(pc, false, broadcast_mac, ip);
    }
    if (pc.index == 0) ipv6_timers(pc, now);
  }
}

// With the timer fiber gone: every reference the wheel and the list hold.
void stack::release_timers(per_core& pc) {
  for (tcp_socket* s = pc.rearm_head.exchange(nullptr); s != nullptr;) {
    tcp_socket* next = s->rearm_next;
    s->rearm_queued.store(false);
    if (s->home_state.load() == tcp_socket::homing::pending) {
      s->home_state.store(tcp_socket::homing::gone);
      s->unref();  // the wheel's, never taken up
    }
    s->unref();
    s = next;
  }
  while (!pc.homed.empty()) {
    tcp_socket* s = pc.homed.back();
    pc.homed.pop_back();
    pc.wheel.cancel(s->wheel_entry);
    s->home_state.store(tcp_socket::homing::gone);
    s->unref();
  }
}

}  // namespace affine::stack

namespace affine::stack {

stack::timer_counts stack::timers(unsigned core) const {
  const per_core& pc = *cores_[core];
  return {.wakeups = pc.timer_wakeups.load(std::memory_order_relaxed),
          .fired = pc.timer_fired.load(std::memory_order_relaxed),
          .armed = pc.timer_armed.load(std::memory_order_relaxed)};
}

}  // namespace affine::stack
