// The per-core ladder and its accounting. Every change of a core's mode, run
// queue or current task goes through account() first (time integrals for
// load and utilization) and refresh() after (the view the policies read).

#include <algorithm>
#include <cassert>
#include <cmath>

#include "sim/simulator.hh"

namespace affine::sim {

namespace {

// The reactor updates a core's load once per millisecond with weight 1/8
// (reactor/loop.cc update_load); a task's load decays continuously with the
// same time constant, 1 ms / ln(8/7).
const double load_tau_ns = 1e6 / std::log(8.0 / 7.0);

}  // namespace

std::uint32_t simulator::nr_running(const core& c) const {
  return static_cast<std::uint32_t>(c.rq.size()) + (c.current != none ? 1 : 0);
}

void simulator::account(core& c) {
  const std::uint64_t dt = now_ - c.acct_since;
  if (dt == 0) return;
  c.nr_ns += nr_running(c) * dt;
  if (c.mode == core_mode::rx || c.mode == core_mode::running || c.mode == core_mode::polling) c.busy_ns += dt;
  if (c.mode == core_mode::rx) c.rx_ns += dt;
  c.acct_since = now_;
}

void simulator::refresh(core& c) {
  if (!c.reactor) return;
  policy::core_state& s = view_cores_[c.id];
  s.nr_running = nr_running(c);
  // "A reactor with nothing runnable that is not processing packets" (view.hh).
  // With kernel.softirq_idle, idle_cpu()'s view: a CPU in softirq on top of
  // its idle task counts as idle.
  s.idle = s.nr_running == 0 &&
           (c.mode == core_mode::sleeping || c.mode == core_mode::spinning || c.mode == core_mode::waking ||
            (p_.kernel.softirq_idle && c.mode == core_mode::rx));
}

void simulator::set_mode(core& c, core_mode m) {
  account(c);
  c.mode = m;
  refresh(c);
}

// New work for the core: a packet, a backlog batch, a wakeup, a kick.
// `interrupt` says the work arrives by interrupt (RX, RPS IPI), which stops a
// running task when RX runs as an interrupt; a wakeup only joins the queue.
void simulator::notify(core& c, bool interrupt) {
  switch (c.mode) {
    case core_mode::sleeping:
      set_mode(c, core_mode::waking);
      c.irq_pending = interrupt;
      ++c.gen;
      events_.push(now_ + p_.cost.idle_exit_ns, event_kind::core_wake, c.id, c.gen);
      return;
    case core_mode::waking:
      c.irq_pending = c.irq_pending || interrupt;
      return;
    case core_mode::rx:
      return;  // the RX loop finds it before the task resumes
    case core_mode::spinning:
      ++c.gen;  // cancels spin_end; the spinning reactor polls, no interrupt
      turn(c);
      return;
    case core_mode::polling:
      // A busy-polling fiber processes its queue itself (no interrupt) and
      // sees every change of the run queue.
      interrupt_task(c);
      turn(c);
      return;
    case core_mode::running:
      if (interrupt && p_.machine.rx_interrupt) {
        interrupt_task(c);
        c.irq_pending = true;
        turn(c);
      }
      return;
  }
}

// The current task stops where it is: its burst and slice are charged with
// the time it ran, and its pending segment event is cancelled.
void simulator::interrupt_task(core& c) {
  task& t = tasks_[static_cast<std::size_t>(c.current)];
  const std::uint64_t ran = now_ - c.seg_start;
  if (c.mode == core_mode::running) t.remaining -= std::min(ran, t.remaining);
  t.slice_used += ran;
  if (c.mode == core_mode::running || c.mode == core_mode::polling) t.vruntime += ran;
  c.seg_start = now_;
  ++c.gen;
}

// The reactor ladder (DESIGN.md section 2). Remote wakeups have already
// joined the run queue when their inbox entry arrived (wake_arrive).
void simulator::turn(core& c) {
  if (rx_waiting(c) || backlog_ready(c)) {
    start_rx(c);
    return;
  }
  c.irq_pending = false;
  if (c.current != none) {
    if (tasks_[static_cast<std::size_t>(c.current)].state == task_state::polling) {
      poll_recheck(c);
    } else {
      start_segment(c);
    }
    return;
  }
  if (!c.rq.empty() || try_steal(c)) {
    run_next(c);
    return;
  }
  go_idle(c);
}

void simulator::run_next(core& c) {
  account(c);
  const std::uint32_t id = c.rq.take(pick_next(c));
  task& t = tasks_[id];
  c.current = static_cast<std::int32_t>(id);
  c.resched = false;
  std::uint64_t overhead = 0;
  if (c.last_task != c.current) overhead += p_.cost.switch_ns;
  if (t.has_run && t.last_ran != c.id) {
    const distance d = topo_.dist(core_id{t.last_ran}, core_id{c.id});
    overhead += p_.cost.migrate_ns[static_cast<std::size_t>(d)];
    ++out_.count.migrations;
    if (d == distance::remote_node) ++out_.count.remote_migrations;
  }
  if (t.stolen) overhead += p_.cost.steal_ns;
  if (t.woken) overhead += p_.cost.wakeup_ns;
  t.woken = false;
  t.stolen = false;
  t.has_run = true;
  t.last_ran = t.core = c.id;
  c.last_task = c.current;
  t.state = task_state::running;
  t.slice_used = 0;
  refresh(c);
  if (t.remaining == 0 && !begin_work(c, t)) {
    block(c, t);
    turn(c);
    return;
  }
  t.remaining += overhead;
  start_segment(c);
}

void simulator::start_segment(core& c) {
  task& t = tasks_[static_cast<std::size_t>(c.current)];
  if (t.slice_used >= t.slice || c.resched) {
    // Slice used (or CFS's need_resched): the task goes behind those
    // waiting, or starts a new slice.
    c.resched = false;
    if (!c.rq.empty()) {
      account(c);
      t.state = task_state::runnable;
      (void)c.rq.push(static_cast<std::uint32_t>(c.current));
      c.current = none;
      run_next(c);
      return;
    }
    t.slice_used = 0;
  }
  const std::uint64_t run = std::min(t.remaining, t.slice - t.slice_used);
  set_mode(c, core_mode::running);
  c.seg_start = now_;
  ++c.gen;
  events_.push(now_ + run, event_kind::core_done, c.id, c.gen);
}

void simulator::finish_segment(core& c) {
  if (c.mode == core_mode::rx) {
    finish_rx(c);
    turn(c);
    return;
  }
  task& t = tasks_[static_cast<std::size_t>(c.current)];
  const std::uint64_t ran = now_ - c.seg_start;
  t.remaining -= std::min(ran, t.remaining);
  t.slice_used += ran;
  t.vruntime += ran;
  if (t.remaining == 0) {
    work_done(c, t);
  } else {
    turn(c);  // slice used: RX first, then start_segment rotates or renews
  }
}

void simulator::go_idle(core& c) {
  ++c.gen;
  if (p_.machine.spin_ns > 0) {
    set_mode(c, core_mode::spinning);
    events_.push(now_ + p_.machine.spin_ns, event_kind::spin_end, c.id, c.gen);
  } else {
    set_mode(c, core_mode::sleeping);
  }
}

void simulator::core_wake(core& c) { turn(c); }

void simulator::block(core& c, task& t) {
  account(c);
  if (p_.kernel.cfs) (void)min_vruntime(c);  // the queue's clock as the task leaves (dequeue_entity)
  t.state = task_state::blocked;
  c.current = none;
  c.resched = false;
  set_task_runnable(t, false);
  refresh(c);
}

void simulator::enqueue(core& c, std::uint32_t id) {
  account(c);
  task& t = tasks_[id];
  bool resched = false;
  if (p_.kernel.cfs) {
    cfs_place(c, t, t.state == task_state::waking);
    resched = t.state == task_state::waking && wakeup_preempts(c, t);
  }
  t.state = task_state::runnable;
  t.core = c.id;
  set_task_runnable(t, true);
  [[maybe_unused]] const bool ok = c.rq.push(id);  // sized for every task
  assert(ok);
  refresh(c);
  if (resched) {
    // A busy poller sees need_resched at the look notify() gives it; a
    // running task is preempted at once.
    c.resched = true;
    ++out_.count.preemptions;
  }
  notify(c, false);
  if (c.resched && c.mode == core_mode::running) {
    interrupt_task(c);
    turn(c);
  }
}

void simulator::set_task_runnable(task& t, bool runnable) {
  (void)task_load(t);
  t.load_runnable = runnable;
}

std::uint32_t simulator::task_load(task& t) {
  const double target = t.load_runnable ? policy::load_scale : 0.0;
  const auto dt = static_cast<double>(now_ - t.load_since);
  t.load = target + (t.load - target) * std::exp(-dt / load_tau_ns);
  t.load_since = now_;
  return static_cast<std::uint32_t>(t.load);
}

void simulator::load_tick() {
  for (const core_id id : p_.machine.reactor_cores) {
    core& c = cores_[id.value];
    account(c);
    policy::core_state& s = view_cores_[id.value];
    // The reactor's update (reactor/loop.cc update_load), with the sample
    // taken as the average over the period instead of one instant.
    const auto nr = static_cast<std::uint32_t>((c.nr_ns - c.nr_ns_tick) * policy::load_scale / load_period_ns);
    const auto rx = static_cast<std::uint32_t>((c.rx_ns - c.rx_ns_tick) * policy::load_scale / load_period_ns);
    s.load = s.load - s.load / 8 + nr / 8;
    s.rx_share = s.rx_share - s.rx_share / 8 + rx / 8;
    c.nr_ns_tick = c.nr_ns;
    c.rx_ns_tick = c.rx_ns;
  }
}

void simulator::sample_tick() {
  for (unsigned n = 0; n < topo_.node_count(); ++n) {
    std::uint64_t busy = 0;
    unsigned count = 0;
    for (const core_id id : topo_.cores_in_node(n)) {
      core& c = cores_[id.value];
      if (!c.reactor) continue;
      account(c);
      busy += c.busy_ns - c.busy_ns_sample;
      c.busy_ns_sample = c.busy_ns;
      ++count;
    }
    const double pct = count == 0 ? 0.0
                                  : 100.0 * static_cast<double>(busy) /
                                        (static_cast<double>(p_.run.sample_ns) * count);
    out_.node_busy_series[n].push_back(pct);
  }
}

}  // namespace affine::sim
