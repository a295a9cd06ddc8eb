// The reactor loop: one ordered ladder per turn, a counter on every rung
// (DESIGN.md section 2, STYLE.md "the scheduler reads as its policy"):
//
//   poll RX queues -> backlog -> inbox -> timers -> run fibers -> TX flush
//   -> (nothing done) steal -> spin -> sleep
//
// Idle reactors sleep: after a spin while spinning pays (reactor.idle,
// idle.hh), a reactor blocks in epoll on its eventfd (remote wakeups kick
// it) and its pollers' interrupt fds, with the next timer as the timeout.

#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cassert>

#include "affine/log.hh"
#include "reactor/policy/balance.hh"
#include "reactor/cycles.hh"
#include "reactor/runtime_state.hh"
#include "reactor/sanitizer_hooks.hh"

namespace affine::detail {

namespace {

constexpr unsigned inbox_budget = 256;
constexpr unsigned timer_budget = 256;
constexpr std::uint64_t load_period_ns = 1'000'000;   // load average update period
constexpr std::uint64_t publish_period_ns = 1'000'000;  // counters to readers

void count(core_ctx& c, rung r, std::uint64_t n) { c.c.rung_work[std::size_t(r)] += n; }

void publish_state(core_ctx& c) {
  c.pub_nr_running.store(c.nr_running(), std::memory_order_relaxed);
  c.pub_timers.store(c.timers.size(), std::memory_order_relaxed);
}

// Polls every poller, in the loop's turn or its idle spin: RX queues' items
// count on the poll rung, backlog rings' (RPS) on the backlog rung.
unsigned poll_all(core_ctx& c) {
  unsigned rx = 0, backlog = 0;
  c.context_kind = policy::waker_kind::rx_path;
  for (poller* p : c.pollers)
    if (const unsigned k = p->poll(); k != 0) (p->is_backlog() ? backlog : rx) += k;
  count(c, rung::poll, rx);
  count(c, rung::backlog, backlog);
  return rx + backlog;
}

unsigned drain_inbox(core_ctx& c) {
  unsigned n = 0;
  while (n < inbox_budget) {
    inbox_node* node = c.inbox.pop();
    if (node == nullptr) break;
    ++n;
    switch (node->what) {
      case inbox_node::kind::fiber_wake: c.rq.push(static_cast<fiber*>(node)); break;
      case inbox_node::kind::timer_release: handle_timer_release(c, static_cast<fiber_timer*>(node)); break;
      case inbox_node::kind::task: {
        auto* t = static_cast<task_node*>(node);
        t->fn();
        delete t;
        break;
      }
      case inbox_node::kind::stub: assert(false); break;
    }
  }
  return n;
}

// Run queued fibers until the queue is empty or the quantum (the task quota)
// is used, so the other rungs get their turn even under heavy fiber load.
unsigned run_fibers(core_ctx& c) {
  unsigned n = 0;
  c.last_cycles = cycles();
  const std::uint64_t until = c.last_cycles + c.rt->quota_cycles;
  // One preempted in the last turn goes behind what the rungs since woke;
  // one left for an RX interrupt resumes first, as an interrupted task does.
  if (c.preempted != nullptr) c.rq.push(std::exchange(c.preempted, nullptr));
  for (fiber* f = c.interrupted != nullptr ? c.interrupted : c.rq.pop(); f != nullptr; f = c.rq.pop()) {
    publish_state(c);
    // f counts as running from now: a fiber that runs long (one preempted
    // runs until its quantum is over) leaves the ones queued behind it
    // visible to thieves as waiting beside a running one.
    c.pub_nr_running.store(c.rq.size() + 1, std::memory_order_relaxed);
    run_fiber(c, f);  // refreshes c.last_cycles
    ++n;
    // A preemption or an RX interrupt: the poll rung comes before anything else.
    if (c.last_cycles >= until || c.interrupted != nullptr || c.preempted != nullptr) break;
  }
  publish_state(c);
  return n;
}

unsigned flush_all(core_ctx& c) {
  unsigned n = 0;
  for (poller* p : c.pollers) n += p->flush();
  return n;
}

// Take one waiting fiber from the core the balancer names (policy/balance).
bool try_steal(core_ctx& c) {
  runtime_state& rt = *c.rt;
  if (!rt.policy.steal || rt.cores.size() < 2) return false;
  const policy::sched_view view = snapshot(c);
  const auto choice = policy::steal_from(view, c.topo_core, rt.policy);
  if (!choice) return false;
  core_ctx& victim = rt.core(unsigned(rt.reactor_of_topo[choice->victim.value]));
  fiber* f = victim.rq.steal();
  if (f == nullptr) return false;
  c.rq.push(f);
  ++c.c.steals[std::size_t(choice->level)];
  count(c, rung::steal, 1);
  return true;
}

bool has_work(core_ctx& c) {
  return !c.rq.empty() || c.interrupted != nullptr || c.preempted != nullptr || !c.inbox.empty() || c.rt->stopping.load(std::memory_order_seq_cst) ||
         (c.timers.size() > 0 && *c.timers.next_deadline() <= now_ns());
}

// Every poller can wake an epoll: no naps.
bool all_interrupts(const core_ctx& c) {
  for (const poller* p : c.pollers)
    if (p->interrupt_fd() < 0) return false;
  return true;
}

void sleep(core_ctx& c) {
  // Arm interrupts on every poller; one that cannot (or found work) keeps us
  // to a short nap so it is polled again soon.
  bool all_armed = true;
  for (poller* p : c.pollers) all_armed = p->try_enter_interrupt_mode() && all_armed;

  c.sleeping.store(true, std::memory_order_seq_cst);  // then has_work() reads the inbox: see kick()
  if (!has_work(c)) {
    idle_state& is = c.idle;
    const std::uint64_t now = now_ns();
    std::uint64_t timeout = ~0ULL;
    if (auto d = c.timers.next_deadline()) timeout = *d > now ? *d - now : 0;
    // A poller without interrupts is looked at again after a nap of a
    // quarter of the silence so far (idle.hh), so a flow that just had
    // traffic waits little and an idle reactor costs little CPU.
    const std::uint64_t nap = all_armed ? ~0ULL : is.nap_ns(now);
    const bool napping = nap < timeout;
    timeout = std::min(timeout, nap);
    timespec ts{};
    timespec* tsp = nullptr;
    if (timeout != ~0ULL) {
      ts.tv_sec = time_t(timeout / 1'000'000'000ULL);
      ts.tv_nsec = long(timeout % 1'000'000'000ULL);
      tsp = &ts;
    }
    epoll_event ev[8];
    ++c.c.sleeps;
    count(c, rung::sleep, 1);
    c.publish_counters();  // readers see exact counters whenever a reactor rests
    const std::uint64_t t0 = now_ns();
    // Ticks wait while the reactor sleeps (one that comes finds no fiber
    // when it is delivered on waking, and stops).
    const int n = ::epoll_pwait2(c.epoll_fd, ev, 8, tsp, c.tick.made ? &c.tick.sleep_mask : nullptr);
    const std::uint64_t t1 = now_ns();
    c.c.sleep_ns += t1 - t0;
    // When what ended the sleep came, and so what a wake costs here: a
    // nap's packets came at some point of it, a timer at its deadline, a
    // kick when its waker says; an interrupt a wake ago.
    if (n == 0 && tsp != nullptr) {
      is.note_wake(t1 - std::min(t1, t0 + timeout));
      is.ended_at = napping ? t0 + timeout / 2 : t0 + timeout;
    } else if (n > 0) {
      is.ended_at = t1 - std::min(t1, is.wake_ns);
    }
    for (int i = 0; i < n; ++i) {
      if (ev[i].data.fd == c.event_fd) {
        std::uint64_t v;
        [[maybe_unused]] ssize_t r = ::read(c.event_fd, &v, sizeof v);
        if (const std::uint64_t k = is.kicked_at.exchange(0, std::memory_order_relaxed); k >= t0 && k <= t1) {
          is.note_wake(t1 - k);
          is.ended_at = k;
        }
      }
    }
    c.c.wake_ns = is.wake_ns;
  }
  c.sleeping.store(false, std::memory_order_relaxed);
  for (poller* p : c.pollers) p->exit_interrupt_mode();
}

// How long this idle turn polls before it sleeps (reactor.idle): the fixed
// spin_us every turn, for ever, or the adaptive plan once per wait (a wait
// that a nap did not end goes on asleep).
std::uint64_t plan_spin(core_ctx& c, bool first) {
  const runtime_options& o = c.rt->opts;
  const std::uint64_t cap = std::uint64_t(o.spin_us) * 1000;
  switch (o.idle) {
    case idle_mode::spin: return ~0ULL;
    case idle_mode::sleep: ++c.c.spin_plans[std::size_t(policy::spin_reason::fixed)]; return cap;
    case idle_mode::adaptive: break;
  }
  if (!first) return 0;
  idle_state& is = c.idle;
  const bool shared = is.cpu.shared(c.now);
  c.c.cpu_wait_ns = is.cpu.waited_ns();
  c.c.cpu_shared_samples = is.cpu.shared_samples();
  is.interrupts = all_interrupts(c);
  const policy::spin_plan plan = is.spin.plan(cap, is.sleep_cost_ns(is.interrupts, c.now), shared);
  ++c.c.spin_plans[std::size_t(plan.reason)];
  return plan.window_ns;
}

void idle(core_ctx& c) {
  const std::uint64_t start = c.now;
  c.pub_idle.store(true, std::memory_order_relaxed);
  publish_state(c);
  if (try_steal(c)) {
    c.pub_idle.store(false, std::memory_order_relaxed);
    return;
  }
  idle_state& is = c.idle;
  const bool first = !is.waiting;
  if (first) {
    is.waiting = true;
    is.wait_start = start;
    is.ended_at = 0;
  }
  const std::uint64_t window = plan_spin(c, first);
  const std::uint64_t spin_until = window == ~0ULL ? ~0ULL : start + window;
  bool found = false;
  for (;;) {
    if (has_work(c) || poll_all(c) > 0) {
      found = true;
      is.ended_at = 0;  // it ended while we polled
      break;
    }
    count(c, rung::spin, 1);
    __builtin_ia32_pause();
    if (now_ns() >= spin_until) break;
  }
  if (!found) sleep(c);
  c.now = now_ns();
  c.c.idle_ns += c.now - start;
  c.pub_idle.store(false, std::memory_order_relaxed);
}

// A turn did work: the wait in progress is over. The adaptive spin learns
// how long it was, from its start to when what ended it came.
void end_wait(core_ctx& c) {
  idle_state& is = c.idle;
  is.last_work = c.now;
  if (!is.waiting) return;
  is.waiting = false;
  const std::uint64_t end = is.ended_at > is.wait_start && is.ended_at < c.now ? is.ended_at : c.now;
  if (c.rt->opts.idle == idle_mode::adaptive) is.spin.record(end - is.wait_start);
}

// A sleeping reactor cannot steal: it is in epoll. A core with fibers
// waiting wakes the first sleeping core whose balancer would pick it as the
// victim (the kernel's nohz idle-balance kick); steal_from's thresholds keep
// it from waking cores that would not take anything.
void kick_idle_thief(core_ctx& c) {
  if (c.rq.empty() || !c.rt->policy.steal) return;
  runtime_state& rt = *c.rt;
  const policy::sched_view view = snapshot(c);
  for (auto& cp : rt.cores) {
    core_ctx& o = *cp;
    if (&o == &c || !o.sleeping.load(std::memory_order_relaxed)) continue;
    const auto choice = policy::steal_from(view, o.topo_core, rt.policy);
    if (choice && choice->victim == c.topo_core) {
      kick(o);
      return;
    }
  }
}

void update_load(core_ctx& c) {
  if (c.now - c.last_load_update < load_period_ns) return;
  c.last_load_update = c.now;
  // Exponential decay with a 1/8 weight per period (about an 8 ms horizon),
  // in fixed point (policy::load_scale is one always-runnable fiber).
  const std::uint32_t sample = c.nr_running() * policy::load_scale;
  c.load = c.load - c.load / 8 + sample / 8;
  c.pub_load.store(c.load, std::memory_order_relaxed);
}

void turn(core_ctx& c) {
  c.now = now_ns();
  ++c.c.loop_turns;
  unsigned work = 0, n;

  // Poll and backlog rungs: packets handed over by RPS arrive as backlog
  // pollers registered by the stack, polled with the RX pollers.
  n = poll_all(c), work += n;
  c.context_kind = policy::waker_kind::completion;
  n = drain_inbox(c), work += n, count(c, rung::inbox, n);
  c.context_kind = policy::waker_kind::timer;
  n = unsigned(c.timers.advance(c.now, timer_budget)), work += n, count(c, rung::timers, n);
  c.context_kind = policy::waker_kind::rx_path;
  n = run_fibers(c), work += n, count(c, rung::run, n);
  n = flush_all(c), count(c, rung::tx_flush, n);

  update_load(c);
  const std::uint64_t interval = std::uint64_t(c.rt->opts.balance_interval_us) * 1000;
  if (interval != 0 && c.now - c.last_balance >= interval) {
    c.last_balance = c.now;
    if (try_steal(c)) ++work;
    kick_idle_thief(c);
  }
  if (c.now - c.last_publish >= publish_period_ns) {
    c.last_publish = c.now;
    c.publish_counters();
  }
  if (work == 0) {
    idle(c);
  } else {
    end_wait(c);
  }
}

}  // namespace

policy::sched_view snapshot(core_ctx& c) {
  runtime_state& rt = *c.rt;
  for (auto& cp : rt.cores) {
    policy::core_state& s = c.view_scratch[cp->topo_core.value];
    s.nr_running = cp->pub_nr_running.load(std::memory_order_relaxed);
    s.load = cp->pub_load.load(std::memory_order_relaxed);
    s.idle = cp->pub_idle.load(std::memory_order_relaxed);
  }
  policy::core_state& me = c.view_scratch[c.topo_core.value];
  me.nr_running = c.nr_running();
  me.load = c.load;
  me.idle = c.nr_running() == 0;
  return {rt.topo, c.view_scratch, rt.opts.cores};
}

void core_ctx::publish_counters() {
  const auto* src = reinterpret_cast<const std::uint64_t*>(&c);
  for (std::size_t i = 0; i < std::size(published.v); ++i)
    published.v[i].store(src[i], std::memory_order_relaxed);
}

void reactor_main(core_ctx& c) {
  set_this_core(&c);
  set_current_runtime(c.rt);
  log::set_thread_core(int(c.index));
  c.tsan_self = san::current_fiber();
  runtime_state& rt = *c.rt;
  if (rt.ticks)
    if (auto ok = tick_start(c); !ok) AFFINE_LOG_ERROR("{}: no preemption or stall reports on this core", ok.error());
  // Naps and timers as long as asked: the default 50 us of slack would be
  // most of a short nap (idle.hh).
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  c.idle.cpu.open(now_ns());
  c.idle.calibrate(c.epoll_fd);
  c.c.wake_ns = c.idle.wake_ns;
  if (rt.opts.on_reactor_start) rt.opts.on_reactor_start(c.index);
  for (;;) {
    turn(c);
    if (rt.stopping.load(std::memory_order_acquire) && c.nr_running() == 0 && c.inbox.empty()) break;
  }
  tick_stop(c);
  c.publish_counters();
  set_this_core(nullptr);
}

}  // namespace affine::detail
