#pragma once
// State shared by all reactors of one runtime (internal).

#include <atomic>
#include <memory>
#include <source_location>
#include <thread>
#include <vector>

#include "affine/runtime.hh"
#include "reactor/core.hh"
#include "reactor/policy/config.hh"
#include "reactor/policy/place.hh"
#include "reactor/stack_pool.hh"

namespace affine::detail {

struct runtime_state {
  runtime_state(const topology& t, runtime_options o, policy::policy_config p)
      : topo(t), opts(std::move(o)), policy(p), stacks(opts.stack_bytes, unsigned(opts.cores.size())) {}

  const topology& topo;
  runtime_options opts;          // opts.cores filled: reactor index -> topology core
  policy::policy_config policy;
  stack_pool stacks;
  std::vector<std::unique_ptr<core_ctx>> cores;
  std::vector<int> reactor_of_topo;  // topology core -> reactor index, or -1
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> live_fibers{0};
  std::uint64_t quota_cycles = 0;  // reactor.task_quota_us in cycles(): a slice (maybe_yield, run_fibers)
  std::uint64_t quantum_cycles = 0;  // reactor.quantum_us in cycles(): the preemption quantum
  std::uint64_t rx_cycles = 0;     // reactor.rx_interrupt_us in cycles(); 0: no RX interrupts
  std::uint64_t stall_cycles = 0;  // reactor.stall_report_ms in cycles(); 0: no reports
  bool ticks = false;              // preemption or stall reports: the reactors run tick timers
  // The stall reporter (preempt.cc): an eventfd the handlers write to, its thread.
  int stall_fd = -1;
  std::atomic<bool> stall_reporter_stop{false};
  std::thread stall_reporter;

  core_ctx& core(unsigned i) { return *cores[i]; }
};

// The runtime the calling thread belongs to (a reactor's, or the one most
// recently started, for spawns from outside threads).
runtime_state* current_runtime() noexcept;
void set_current_runtime(runtime_state* rt) noexcept;

// Wake plumbing (wake.cc).
// Parking the running fiber (see `phase` in fiber.hh). prepare_park starts a
// new generation in phase `parking` and returns it; the caller registers the
// fiber wherever wakers will find it, releases its locks, then calls park,
// which suspends until woken (at once if a waker came in between). With a
// deadline a timer on this core wakes it with wake_reason::timeout. With
// stop_mode::cancel a stop request on the fiber's token wakes it with
// wake_reason::canceled (at once if one came before): the public blocking
// calls park so; waits that must complete (a lock, an operation still
// using the caller's buffers) keep the default.
std::uint32_t prepare_park();
wake_reason park(std::uint32_t generation, std::uint64_t deadline_ns, stop_mode stop = stop_mode::ignore);
// Make the fiber runnable if it is still parking or parked in `generation`;
// false when someone else already woke it, or it moved on. `header` is the
// fiber's stack header (stable even if the fiber ended); `f` is read only
// when the generation matches. The waker's kind and sync hint feed
// place_wakeup (seeds 000 and 004).
bool try_wake(stack_header* header, fiber* f, std::uint32_t generation, wake_reason why,
              policy::waker_kind kind, bool sync = false);
// The waker kind of the caller: fiber inside a fiber, else the reactor's
// current context (RX path, timer, completion) as set by the reactor loop.
policy::waker_kind current_waker_kind();
// Place a woken fiber (pinned core, or place_wakeup) and queue it there.
void schedule(fiber* f, policy::waker_kind kind, bool sync);
// Timed waits: the fiber gives its timer back; the owner core's inbox
// delivers releases from other cores.
void release_timer(fiber_timer* t);
void handle_timer_release(core_ctx& c, fiber_timer* t);
// Queue a runnable fiber on `target` (reactor index) from wherever we are.
void enqueue(fiber* f, unsigned target);
// Wake a sleeping reactor.
void kick(core_ctx& c);

// A closure run on a reactor, delivered through its inbox (spawns and
// handle releases from outside threads, poller changes). Off the data path:
// it allocates.
struct task_node : inbox_node {
  explicit task_node(std::move_only_function<void()> f) : fn(std::move(f)) { what = kind::task; }
  std::move_only_function<void()> fn;
};
void post(runtime_state& rt, unsigned core, std::move_only_function<void()> fn);

// Fiber-local storage (fiber.cc).
void fls_destroy(unsigned key, void* value);

// The view policies decide from: the published state of every reactor
// core, this core's own exact (loop.cc).
policy::sched_view snapshot(core_ctx& c);
void reactor_main(core_ctx& c);

// Switching (switch.cc).
// Null when no stack can be had (`why` says why); `fn` is then left as it was.
fiber* create_fiber(runtime_state& rt, unsigned core, std::move_only_function<void()>& fn,
                    const spawn_options& opts, std::stop_token stop, std::source_location where, std::string* why);
void run_fiber(core_ctx& c, fiber* f);  // reactor side: resume f until it switches back
void switch_to_reactor(fiber* self);     // fiber side
void release_fiber(fiber* f);            // drop one reference; frees the stack at zero

}  // namespace affine::detail
