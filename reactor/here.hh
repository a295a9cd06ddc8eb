#pragma once
// What code running on a reactor asks of the reactor about "here": the core
// it runs on, whether a fiber runs or the reactor's own rungs (the RX path,
// DESIGN.md section 4), the scheduler's policy and a snapshot of its load,
// and the parking protocol a multi-socket wait uses. The one interface
// stack/ reaches the reactor through (tests/layering/check.py): everything
// else of the reactor's state stays behind it.
//
// Precondition of every call: on a reactor thread of a running runtime.

#include <cstddef>
#include <cstdint>

#include "reactor/runtime_state.hh"

namespace affine::detail::here {

// The reactor index of the calling thread.
inline unsigned core() { return this_core()->index; }

// True while the reactor runs a fiber; false in its own rungs (RX path,
// timers, inbox), where a wakeup is the "interrupt" of seed 004.
inline bool in_fiber() { return this_core()->current != nullptr; }

// How many fibers wait to run on this core, beside the caller (seed 001:
// a busy poller gives way as soon as this is not zero).
inline std::size_t others_runnable() { return this_core()->rq.size(); }

// Whether another thread or process waits for this core's CPU (seed 001's
// nr_running counts them; reactor/cpu_share.hh), sampled at most once a
// millisecond.
inline bool cpu_shared(std::uint64_t now) { return this_core()->idle.cpu.shared(now); }

// An adaptive busy poll's length, at most `budget_ns` (policy/spin.hh), and
// what its wait turned out to be: this core's readers share one governor.
// Counted by reason in core_counters::busy_poll_plans.
inline policy::spin_plan plan_busy_poll(std::uint64_t budget_ns, std::uint64_t now) {
  core_ctx& c = *this_core();
  idle_state& is = c.idle;
  const bool shared = is.cpu.shared(now);
  const policy::spin_plan plan = is.busy_poll.plan(budget_ns, is.sleep_cost_ns(is.interrupts, now), shared);
  ++c.c.busy_poll_plans[std::size_t(plan.reason)];
  return plan;
}
inline void record_busy_poll(std::uint64_t wait_ns) { this_core()->idle.busy_poll.record(wait_ns); }

// The scheduler's policy settings (seeds 000-004), fixed while it runs.
inline const policy::policy_config& policy() { return this_core()->rt->policy; }

// The scheduler's load on every core now, for a placement decision.
inline policy::sched_view sched_view() { return snapshot(*this_core()); }

// The parking protocol for a wait on several queues (runtime_state.hh):
// begin(), link the fiber on its queues, then park() or, when something
// was ready after all, stay().
struct parking {
  fiber* self;
  std::uint32_t generation;
};
inline parking begin_park() { return {this_core()->current, prepare_park()}; }
// Cancellable: a stop request on the fiber's token ends it (canceled).
inline wake_reason park(const parking& p, std::uint64_t deadline_ns) {
  return detail::park(p.generation, deadline_ns, stop_mode::cancel);
}
// The fiber's stop token has a stop request (this_fiber::stop_requested).
inline bool stop_requested() { return this_core()->current->stop.stop_requested(); }
inline void stay(const parking& p) { p.self->set_state(p.generation, phase::running); }

}  // namespace affine::detail::here
