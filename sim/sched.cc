// Where the simulator asks the live policies (reactor/policy/): every wakeup,
// every balance, every busy-poll iteration that could end differently. The
// simulator fills the view and the request the way the reactor does
// (reactor/wake.cc, reactor/loop.cc) and does what the answer says.

#include <algorithm>

#include "reactor/policy/balance.hh"
#include "reactor/policy/busy_poll.hh"
#include "reactor/policy/place.hh"
#include "sim/simulator.hh"

namespace affine::sim {

policy::sched_view simulator::view() const {
  return {topo_, view_cores_, p_.machine.reactor_cores};
}

// A wakeup issued on core `waker`. The RX path marks its wakeups sync, as the
// kernel's sock_def_readable() did before seed 000; whether that is honoured
// is the policy's decision (rx_wakeup_sync).
void simulator::wake_task(std::uint32_t id, std::uint32_t waker, policy::waker_kind kind) {
  task& t = tasks_[id];
  core& w = cores_[waker];
  policy::wakeup wk{.wakee_prev_core = core_id{t.last_ran},
                    .waker_core = core_id{waker},
                    .kind = kind,
                    .sync = true,
                    .pinned = t.pinned};
  wk.wakee_load = task_load(t);
  // For an RX wakeup the "waker" whose load leaves this core on a sync wakeup
  // is the task the RX path interrupted (place.hh), if any.
  wk.waker_load = w.current != none ? task_load(tasks_[static_cast<std::size_t>(w.current)]) : 0;
  const policy::placement pl = policy::place_wakeup(view(), wk, p_.policy);
  ++out_.count.wake_reasons[static_cast<std::size_t>(pl.reason)];
  if (pl.idle_sibling) ++out_.count.wake_idle_sibling;

  t.state = task_state::waking;
  t.woken = true;
  set_task_runnable(t, true);
  if (pl.core.value == waker) {
    enqueue(w, id);
  } else {
    events_.push(now_ + p_.cost.wake_remote_ns, event_kind::wake_arrive, pl.core.value, id);
  }
}

// steal_from names a victim; the thief takes the oldest waiting task there
// that may run on the thief (the reactor's run_queue::steal takes the oldest).
bool simulator::try_steal(core& c) {
  if (!c.reactor) return false;
  const auto choice = policy::steal_from(view(), core_id{c.id}, p_.policy);
  if (!choice) return false;
  core& v = cores_[choice->victim.value];
  for (std::size_t i = 0; i < v.rq.size(); ++i) {
    const std::uint32_t id = v.rq.at(i);
    if (!allowed(tasks_[id], c.id)) continue;
    account(v);
    (void)v.rq.take(i);
    refresh(v);
    account(c);
    task& t = tasks_[id];
    if (p_.kernel.cfs) cfs_place(c, t, false);
    t.core = c.id;
    t.stolen = true;
    (void)c.rq.push(id);
    refresh(c);
    ++out_.count.steals[static_cast<std::size_t>(choice->level)];
    return true;
  }
  return false;
}

// The periodic balance of an awake core. A sleeping reactor runs no turns, so
// a busy core with waiting tasks wakes a sleeping one to balance, as the
// kernel's scheduler tick kicks an idle CPU for nohz idle balancing
// (nohz_balancer_kick: rq->nr_running >= 2). The kernel's kicked CPU then
// balances on behalf of every idle CPU; here each kick wakes the next
// sleeping core in turn, so over a few ticks every idle core gets its look
// instead of the lowest-numbered ones taking all the work.
void simulator::balance_tick(core& c) {
  events_.push(now_ + p_.machine.balance_interval_ns, event_kind::balance_tick, c.id);
  if (c.mode == core_mode::sleeping || c.mode == core_mode::waking) return;
  if (try_steal(c) && c.mode == core_mode::spinning) notify(c, false);
  if (!p_.machine.idle_kick || nr_running(c) < 2) return;
  const std::vector<core_id>& rc = p_.machine.reactor_cores;
  for (std::size_t i = 1; i <= rc.size(); ++i) {
    const std::size_t k = (last_kick_ + i) % rc.size();
    if (cores_[rc[k].value].mode == core_mode::sleeping) {
      last_kick_ = k;
      ++out_.count.idle_kicks;
      notify(cores_[rc[k].value], false);
      return;
    }
  }
}

// A server with no request waiting: it busy-polls if the policy lets it
// (budget 0 is the policy's "off" exit, so every server goes through here).
void simulator::enter_poll(core& c) {
  task& t = tasks_[static_cast<std::size_t>(c.current)];
  t.state = task_state::polling;
  t.poll_start = now_;
  c.seg_start = now_;
  poll_recheck(c);
}

// One look of sk_busy_loop()'s condition, at each moment its answer could
// change: data delivered, the run queue changed, the budget or the quota ran
// out. Precondition: the poller's slice is charged up to now.
void simulator::poll_recheck(core& c) {
  task& t = tasks_[static_cast<std::size_t>(c.current)];
  // With nobody waiting a used slice is simply renewed (start_segment does the same).
  if (t.slice_used >= t.slice && c.rq.empty()) t.slice_used = 0;
  const policy::busy_poll_state s{
      .elapsed_ns = now_ - t.poll_start,
      .others_runnable = static_cast<std::uint32_t>(c.rq.size()),
      .data_ready = !flows_[t.flow].socket.empty(),
      .need_resched = t.slice_used >= t.slice || c.resched,
  };
  const policy::poll_decision d = policy::busy_poll_continue(s, p_.policy);
  if (d.keep_polling) {
    set_mode(c, core_mode::polling);
    c.seg_start = now_;
    ++c.gen;
    const std::uint64_t budget_left = p_.policy.busy_poll_budget_ns - std::min(s.elapsed_ns, p_.policy.busy_poll_budget_ns);
    const std::uint64_t next = std::max<std::uint64_t>(1, std::min(budget_left, t.slice - t.slice_used));
    events_.push(now_ + next, event_kind::poll_check, c.id, c.gen);
    return;
  }
  ++out_.count.poll_exits[static_cast<std::size_t>(d.reason)];
  if (d.reason == policy::poll_exit::data && take_request(c, t)) {
    t.state = task_state::running;
    start_segment(c);
    return;
  }
  block(c, t);
  turn(c);
}

}  // namespace affine::sim
