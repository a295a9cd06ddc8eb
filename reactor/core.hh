#pragma once
// Per-core reactor state (internal). One core_ctx per reactor thread; its
// owner reaches it through this_core(), which is never inlined so that a
// fiber that migrated re-reads it after every suspension point (DESIGN.md
// section 4: the compiler may cache a TLS address across a context switch).

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "affine/poller.hh"
#include "affine/stats.hh"
#include "affine/topology.hh"
#include "reactor/fiber.hh"
#include "reactor/idle.hh"
#include "reactor/inbox.hh"
#include "reactor/preempt.hh"
#include "reactor/policy/place.hh"
#include "reactor/policy/view.hh"
#include "reactor/run_queue.hh"
#include "reactor/timer_wheel.hh"

namespace affine::detail {

struct runtime_state;

// A timeout of a parked fiber. Owned by the core whose wheel holds it; freed
// when both the wheel (fired or cancelled) and the fiber (released it) are
// done with it. A fiber woken on another core releases it by message.
struct fiber_timer : inbox_node {
  fiber_timer() : tm(&fiber_timer::fire, this) { what = kind::timer_release; }
  static void fire(timer& t, void* self);
  timer tm;
  stack_header* header = nullptr;
  fiber* f = nullptr;
  std::uint32_t generation = 0;
  std::uint32_t owner = 0;
  std::uint8_t refs = 0;  // wheel + fiber; touched only on the owner core
  fiber_timer* next_free = nullptr;
};

// Single-writer counters: the owner stores, anyone loads.
struct live_counters {
  std::atomic<std::uint64_t> v[sizeof(core_counters) / sizeof(std::uint64_t)];
};
static_assert(sizeof(core_counters) % sizeof(std::uint64_t) == 0);

struct alignas(64) core_ctx {
  runtime_state* rt = nullptr;
  unsigned index = 0;          // reactor index
  core_id topo_core;           // its core in the topology

  run_queue rq;
  mpsc_inbox inbox;
  timer_wheel timers;
  fiber* current = nullptr;
  // Who is waking fibers when no fiber runs: the rung being executed.
  policy::waker_kind context_kind = policy::waker_kind::rx_path;
  bool yielded = false;  // the current fiber switched away to be requeued
  int migrate_to = -1;   // ... or to be queued on this reactor instead
  bool rx_interrupted = false;   // ... or to resume after one poll turn (preempt.cc)
  bool quantum_preempted = false;  // ... or was preempted at its quantum's end (preempt.cc)
  fiber* interrupted = nullptr;  // left for an RX interrupt: the next to run, its slice going on
  fiber* preempted = nullptr;    // preempted: queued after the poll rung, behind what it woke
  std::vector<poller*> pollers;  // owner-only; changed through the inbox
  std::uint64_t now = 0;         // reactor clock, refreshed every loop turn
  std::uint64_t last_cycles = 0; // cycles() at the last switch back to the reactor
  std::uint64_t last_balance = 0;
  std::uint64_t last_load_update = 0;
  std::uint64_t last_publish = 0;
  idle_state idle;               // the idle rungs' measurements and spin plans (idle.hh)
  std::uint32_t load = 0;        // decayed nr_running x load_scale (owner)
  std::uint64_t fiber_seq = 0;   // ids of fibers made here
  tick_state tick;               // preemption and stall detection (preempt.cc)
  stall_capture stall;

  // Published for policies on other cores.
  std::atomic<std::uint32_t> pub_nr_running{0};
  std::atomic<std::uint32_t> pub_load{0};
  std::atomic<bool> pub_idle{true};
  std::atomic<std::size_t> pub_timers{0};  // armed timers, for leak checks

  // Sleep/wake handshake.
  std::atomic<bool> sleeping{false};
  int event_fd = -1;
  int epoll_fd = -1;

  std::vector<policy::core_state> view_scratch;  // owner: snapshot for policies

  fiber_timer* free_timers = nullptr;
  std::vector<fiber_timer*> timer_blocks;  // owner; freed at shutdown

  core_counters c;  // owner's working copy
  live_counters published;

  // Sanitizer context of the reactor thread itself.
  void* tsan_self = nullptr;
  const void* asan_stack_bottom = nullptr;
  std::size_t asan_stack_size = 0;

  std::thread thread;

  explicit core_ctx(std::uint64_t now) : timers(now) {}
  std::uint32_t nr_running() const {
    return rq.size() + (current != nullptr || interrupted != nullptr ? 1U : 0U) + (preempted != nullptr ? 1U : 0U);
  }
  void publish_counters();
};

// The reactor the calling thread runs, or nullptr off the reactors.
[[gnu::noinline, gnu::noipa]] core_ctx* this_core() noexcept;
void set_this_core(core_ctx* c) noexcept;

}  // namespace affine::detail
