// The seeds' kernel scheduler, CFS as Linux 3.x to 5.x had it, for the
// scenarios that reproduce a seed (kernel.cfs). Each rule names the kernel
// function it mirrors (kernel/sched/fair.c). Tasks have equal weight (nice
// 0), so a slice is the period divided by the number of runnable tasks.
//
// What it changes in the ladder: the run queue picks the smallest vruntime
// (pick_next_entity) instead of the oldest; a running task is preempted at a
// tick once it has run its slice (check_preempt_tick) instead of after a
// fixed quota; a woken task placed well behind the running one preempts it
// (check_preempt_wakeup), and need_resched ends a busy poll (sk_busy_loop's
// !need_resched(), which ends seed 001's loop even without the seed).

#include <algorithm>
#include <limits>

#include "sim/simulator.hh"

namespace affine::sim {

// The running (or busy-polling) task's vruntime, charged up to now.
std::uint64_t simulator::current_vruntime(const core& c) const {
  const task& t = tasks_[static_cast<std::size_t>(c.current)];
  const bool on_cpu = c.mode == core_mode::running || c.mode == core_mode::polling;
  return t.vruntime + (on_cpu ? now_ - c.seg_start : 0);
}

// update_min_vruntime: the queue's clock only moves forward, following the
// smallest vruntime among the running task and those waiting.
std::uint64_t simulator::min_vruntime(core& c) {
  std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
  if (c.current != none) m = current_vruntime(c);
  for (std::size_t i = 0; i < c.rq.size(); ++i) m = std::min(m, tasks_[c.rq.at(i)].vruntime);
  if (m != std::numeric_limits<std::uint64_t>::max()) c.min_vruntime = std::max(c.min_vruntime, m);
  return c.min_vruntime;
}

// A task joins core c's queue. A task from another queue keeps its vruntime
// relative to that queue's min_vruntime (migrate_task_rq_fair, then
// enqueue_entity); a waking task is placed no further than latency / 2
// behind min_vruntime (place_entity with GENTLE_FAIR_SLEEPERS), so a long
// sleep is not credited in full.
void simulator::cfs_place(core& c, task& t, bool wakeup) {
  const std::uint64_t here = min_vruntime(c);
  if (t.vr_core != c.id) {
    const std::uint64_t there = min_vruntime(cores_[t.vr_core]);
    // vruntime - there + here, never below 0.
    t.vruntime = t.vruntime + here - std::min(there, t.vruntime + here);
    t.vr_core = c.id;
  }
  if (wakeup && p_.kernel.sleeper_credit) {
    const std::uint64_t credit = p_.kernel.latency_ns / 2;
    t.vruntime = std::max(t.vruntime, here - std::min(here, credit));
  }
}

// check_preempt_wakeup / wakeup_preempt_entity: the woken task preempts the
// running one when it is more than the wakeup granularity behind it.
bool simulator::wakeup_preempts(const core& c, const task& t) const {
  if (!p_.kernel.wakeup_preemption || c.current == none) return false;
  if (&tasks_[static_cast<std::size_t>(c.current)] == &t) return false;
  return current_vruntime(c) > t.vruntime + p_.kernel.wakeup_granularity_ns;
}

// scheduler_tick -> task_tick_fair -> check_preempt_tick, with more than one
// task runnable: the running task gives the core up once it has run its
// slice since it was picked, or once it is a slice ahead of the leftmost
// waiting task and has run at least the minimum granularity.
void simulator::sched_tick(core& c) {
  events_.push(now_ + p_.kernel.tick_ns, event_kind::sched_tick, c.id);
  if (!p_.kernel.tick_preemption || c.current == none || c.resched) return;
  const std::uint32_t nr = nr_running(c);
  if (c.rq.empty()) return;  // the running task alone: nothing to preempt it for
  const kernel_params& k = p_.kernel;
  const std::uint64_t period = std::max<std::uint64_t>(k.latency_ns, nr * k.min_granularity_ns);  // __sched_period
  const std::uint64_t ideal = period / nr;                                                            // sched_slice
  const task& t = tasks_[static_cast<std::size_t>(c.current)];
  const bool on_cpu = c.mode == core_mode::running || c.mode == core_mode::polling;
  const std::uint64_t ran = t.slice_used + (on_cpu ? now_ - c.seg_start : 0);
  bool resched = ran > ideal;
  if (!resched && ran >= k.min_granularity_ns) {
    std::uint64_t leftmost = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t i = 0; i < c.rq.size(); ++i) leftmost = std::min(leftmost, tasks_[c.rq.at(i)].vruntime);
    const std::uint64_t cur = current_vruntime(c);
    resched = cur > leftmost && cur - leftmost > ideal;
  }
  if (resched) preempt(c);
}

// resched_curr: the running task stops at once; a busy-polling one sees
// need_resched at its next look. Under RX the flag waits for the task to
// resume (start_segment and poll_recheck read it).
void simulator::preempt(core& c) {
  c.resched = true;
  ++out_.count.preemptions;
  if (c.mode == core_mode::running) {
    interrupt_task(c);
    turn(c);
  } else if (c.mode == core_mode::polling) {
    interrupt_task(c);
    poll_recheck(c);
  }
}

// pick_next_entity: the smallest vruntime; without CFS the oldest (FIFO).
std::size_t simulator::pick_next(const core& c) const {
  if (!p_.kernel.cfs) return 0;
  std::size_t best = 0;
  for (std::size_t i = 1; i < c.rq.size(); ++i) {
    if (tasks_[c.rq.at(i)].vruntime < tasks_[c.rq.at(best)].vruntime) best = i;
  }
  return best;
}

}  // namespace affine::sim
