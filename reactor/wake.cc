// Parking and waking fibers, placement of wakeups, the inbox hand-off and
// the eventfd kick of a sleeping reactor.

#include <unistd.h>

#include <cassert>

#include "reactor/runtime_state.hh"

namespace affine::detail {

namespace {

fiber_timer* alloc_timer(core_ctx& c) {
  if (c.free_timers == nullptr) {
    // Timers come in blocks of 64, kept until shutdown: one allocation per
    // 64 concurrent timed waits at most, never on the steady-state path.
    constexpr std::size_t block = 64;
    auto* b = new fiber_timer[block];
    c.timer_blocks.push_back(b);
    for (std::size_t i = 0; i < block; ++i) {
      b[i].next_free = c.free_timers;
      c.free_timers = &b[i];
    }
  }
  fiber_timer* t = c.free_timers;
  c.free_timers = t->next_free;
  return t;
}

void drop_timer_ref(core_ctx& c, fiber_timer* t) {
  if (--t->refs == 0) {
    t->next_free = c.free_timers;
    c.free_timers = t;
  }
}

unsigned place(core_ctx& c, fiber* f, policy::waker_kind kind, bool sync) {
  runtime_state& rt = *c.rt;
  const policy::sched_view view = snapshot(c);
  // Loads are left at place.hh's defaults (the waker one whole fiber, the
  // wakee none): the reactor does not track per-fiber load, and the core's
  // load would count every other fiber there as the waker's.
  const policy::wakeup w{.wakee_prev_core = rt.opts.cores[f->last_core],
                         .waker_core = c.topo_core,
                         .kind = kind,
                         .sync = sync};
  const policy::placement p = policy::place_wakeup(view, w, rt.policy);
  ++c.c.placements[std::size_t(p.reason)];
  if (p.idle_sibling) ++c.c.placements_idle_sibling;
  const int r = rt.reactor_of_topo[p.core.value];
  assert(r >= 0);
  return unsigned(r);
}

}  // namespace

void fiber_timer::fire(timer&, void* self) {
  auto* t = static_cast<fiber_timer*>(self);
  core_ctx& c = *this_core();
  try_wake(t->header, t->f, t->generation, wake_reason::timeout, policy::waker_kind::timer);
  ++c.c.timers_fired;
  drop_timer_ref(c, t);
}

// The fiber is done with its timer: cancel it on the core that owns it.
void release_timer(fiber_timer* t) {
  core_ctx& c = *this_core();
  if (t->owner == c.index) {
    if (c.timers.cancel(t->tm)) drop_timer_ref(c, t);
    drop_timer_ref(c, t);
    return;
  }
  core_ctx& owner = c.rt->core(t->owner);
  owner.inbox.push(t);
  kick(owner);
}

void handle_timer_release(core_ctx& c, fiber_timer* t) {
  if (c.timers.cancel(t->tm)) drop_timer_ref(c, t);
  drop_timer_ref(c, t);
}

std::uint32_t prepare_park() {
  fiber* self = this_core()->current;
  const std::uint32_t gen = (self->state() >> generation_shift) + 1;
  self->set_state(gen, phase::parking, std::memory_order_seq_cst);  // see completion::wait
  return gen;
}

wake_reason park(std::uint32_t generation, std::uint64_t deadline_ns, stop_mode stop) {
  core_ctx* c = this_core();
  fiber* self = c->current;
  fiber_timer* t = nullptr;
  if (deadline_ns != no_deadline) {
    t = alloc_timer(*c);
    t->header = self->header;
    t->f = self;
    t->generation = generation;
    t->owner = c->index;
    t->refs = 2;
    c->timers.arm(t->tm, deadline_ns);
  }
  const bool cancellable = stop == stop_mode::cancel && self->on_stop.has_value();
  if (cancellable) {
    self->cancel_park.store(std::uint64_t(generation) << 1 | 1, std::memory_order_seq_cst);
    if (self->stop_seen.load(std::memory_order_seq_cst))
      try_wake(self->header, self, generation, wake_reason::canceled, policy::waker_kind::fiber);
  }
  // A waker may have come between prepare_park and here: then there is
  // nothing to wait for.
  std::uint32_t s = self->state();
  if ((s & phase_mask) != std::uint32_t(phase::runnable)) switch_to_reactor(self);
  if (cancellable) self->cancel_park.store(0, std::memory_order_relaxed);
  s = self->state();
  self->set_state(generation, phase::running);
  if (t != nullptr) release_timer(t);
  return wake_reason((s & reason_mask) >> reason_shift);
}

void fiber::stop_waker::operator()() const noexcept {
  f->stop_seen.store(true, std::memory_order_seq_cst);
  const std::uint64_t p = f->cancel_park.load(std::memory_order_seq_cst);
  if ((p & 1) != 0)
    try_wake(f->header, f, std::uint32_t(p >> 1), wake_reason::canceled, current_waker_kind());
}

bool try_wake(stack_header* header, fiber* f, std::uint32_t generation, wake_reason why,
              policy::waker_kind kind, bool sync) {
  const std::uint32_t reason = std::uint32_t(why) << reason_shift;
  const std::uint32_t woken = generation << generation_shift | reason | std::uint32_t(phase::runnable);
  std::uint32_t s = header->state.load(std::memory_order_acquire);
  for (;;) {
    if ((s >> generation_shift) != generation) return false;
    const phase p = phase(s & phase_mask);
    if (p != phase::parking && p != phase::parked) return false;
    if (header->state.compare_exchange_weak(s, woken, std::memory_order_acq_rel,
                                            std::memory_order_acquire)) {
      // Still parking: its reactor queues it after the switch (see run_fiber).
      if (p == phase::parked) schedule(f, kind, sync);
      return true;
    }
  }
}

void schedule(fiber* f, policy::waker_kind kind, bool sync) {
  core_ctx* c = this_core();
  unsigned target;
  if (f->pinned) {
    target = f->home_core;
  } else if (c == nullptr) {
    target = f->last_core;  // a foreign thread knows nothing better
  } else {
    target = place(*c, f, kind, sync);
  }
  enqueue(f, target);
}

void enqueue(fiber* f, unsigned target) {
  core_ctx* c = this_core();
  if (c != nullptr && c->index == target) {
    c->rq.push(f);
    ++c->c.wakeups_local;
    return;
  }
  runtime_state* rt = c != nullptr ? c->rt : current_runtime();
  core_ctx& t = rt->core(target);
  t.inbox.push(f);
  if (c != nullptr) ++c->c.wakeups_remote;
  kick(t);
}

void kick(core_ctx& t) {
  // Dekker with the sleeper, all seq_cst (no fences: TSan cannot check
  // them): we pushed to its inbox, then read `sleeping`; it stores
  // `sleeping`, then reads its inbox. One of us sees the other's write.
  if (!t.sleeping.load(std::memory_order_seq_cst)) return;
  if (!t.sleeping.exchange(false, std::memory_order_acq_rel)) return;
  t.idle.kicked_at.store(now_ns(), std::memory_order_relaxed);  // the sleeper measures its wake from here
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(t.event_fd, &one, sizeof one);
  if (core_ctx* c = this_core()) ++c->c.kicks_sent;
}

void post(runtime_state& rt, unsigned core, std::move_only_function<void()> fn) {
  core_ctx& t = rt.core(core);
  t.inbox.push(new task_node(std::move(fn)));
  kick(t);
}

policy::waker_kind current_waker_kind() {
  core_ctx* c = this_core();
  if (c == nullptr || c->current != nullptr) return policy::waker_kind::fiber;
  return c->context_kind;
}

}  // namespace affine::detail
