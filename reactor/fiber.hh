#pragma once
// The fiber control block (internal). It lives at the top of the fiber's own
// stack, so a spawn costs no heap allocation beyond what the callable needs.
//
// Lifetime: two references at spawn, one held by the running fiber (dropped
// by the scheduler after the fiber has switched away for the last time) and
// one by the fiber_handle (dropped by join or detach). The last one returns
// the stack to the pool of the core it is dropped on.

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stop_token>

#include <boost/context/fiber.hpp>

#include "reactor/inbox.hh"
#include "reactor/stack_pool.hh"
#include "affine/sync.hh"

namespace affine::detail {

// The word at the very top of every stack: a parking generation that
// survives the fiber using that stack, so a late timer for a finished fiber
// can never wake the next fiber that reuses the stack (see park_token).
struct stack_header {
  std::atomic<std::uint32_t> state{0};
};

// The state word: generation << 4 | why << 2 | phase, `why` the
// wake_reason of the last wake (notified, timeout, canceled).
//
// Parking is two steps so that a fiber can register on wait queues (under
// their locks) before it is off its core: `parking` first; a waker that finds
// it parking marks it runnable but does not queue it; the reactor, once the
// fiber has switched away, moves parking -> parked, and if a waker got there
// first it queues the fiber itself. A waker that finds it `parked` queues it.
// Each park starts a new generation, and so does the fiber's end, so a late
// waker (a timer, a notifier that lost a race) can never wake a later park.
enum class phase : std::uint32_t { running = 0, parking = 1, parked = 2, runnable = 3 };
inline constexpr std::uint32_t phase_mask = 3;
inline constexpr unsigned reason_shift = 2;
inline constexpr std::uint32_t reason_mask = 3u << reason_shift;
inline constexpr unsigned generation_shift = 4;

// Why a parked fiber was woken: a notifier, its deadline, or a stop request
// on its stop token (a cancellable park only; see park_cancellable).
enum class wake_reason : std::uint8_t { notified = 0, timeout = 1, canceled = 2 };

inline constexpr unsigned fls_slots = 8;

struct fiber : inbox_node {
  stack_header* header = nullptr;
  stack_span stack;
  boost::context::fiber context;  // this fiber, while it is not running
  boost::context::fiber caller;   // the reactor that resumed it, while running
  std::move_only_function<void()> entry;

  // Scheduling.
  fiber* next_local = nullptr;  // owner-only list link (overflow, pinned)
  std::uint32_t ring_pos = 0;   // see run_queue
  bool pinned = false;
  bool hold_once = false;       // migrate(): run on the target before any steal
  std::uint32_t home_core = 0;  // pinned core, or spawn core
  std::uint32_t last_core = 0;  // core it last ran on (the wakee's "prev")
  std::uint64_t slice_start = 0;  // cycles() when it was last resumed (after an RX interrupt: kept)

  // Preemption (preempt.cc). The count is raised by runtime code and held
  // spinlocks; written by the fiber's own thread, read by the tick handler
  // on that thread. It starts at 1: the fiber's entry and exit are runtime
  // code; a preemptible fiber runs its body at 0.
  std::atomic<std::uint32_t> no_preempt{1};
  bool preemptible = true;
  std::uint64_t stall_slice = 0;  // slice_start of the slice last reported as a stall
  // Who it is, for stall reports: core << 40 | sequence, and its spawn site.
  std::uint64_t id = 0;
  const char* spawn_file = "";
  std::uint32_t spawn_line = 0;

  std::atomic<int> refs{2};
  spinlock join_lock;
  wait_queue joiners;  // fibers in join(); notified at exit
  bool finished = false;  // under joiners' lock
  std::exception_ptr error;

  void* fls[fls_slots] = {};

  // Cancellation (this_fiber::stop_token): the token the fiber's blocking
  // calls follow, and, while it can be stopped, a callback on it that wakes
  // a cancellable park. Dekker between them, both sides seq_cst: the
  // callback stores stop_seen, then reads cancel_park; a park stores
  // cancel_park, then reads stop_seen. One of them sees the other.
  struct stop_waker {
    fiber* f;
    void operator()() const noexcept;
  };
  std::stop_token stop;
  std::optional<std::stop_callback<stop_waker>> on_stop;
  std::atomic<bool> stop_seen{false};
  std::atomic<std::uint64_t> cancel_park{0};  // generation << 1 | 1 while parked cancellably, else 0
  // Follow `t` from now on (spawn, stop_scope). In the fiber itself.
  void follow(std::stop_token t) {
    on_stop.reset();  // waits for a callback running on another thread
    stop_seen.store(false, std::memory_order_relaxed);
    stop = std::move(t);
    if (stop.stop_possible()) on_stop.emplace(stop, stop_waker{this});
  }

  // Sanitizer bookkeeping for context switches (null when not built with one).
  void* tsan_fiber = nullptr;

  fiber() { what = kind::fiber_wake; }

  std::uint32_t state() const { return header->state.load(std::memory_order_acquire); }
  void set_state(std::uint32_t generation, phase p, std::memory_order mo = std::memory_order_release) {
    header->state.store(generation << generation_shift | std::uint32_t(p), mo);
  }
};

}  // namespace affine::detail
