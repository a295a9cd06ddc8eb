// Creating fibers and switching between a reactor and its fibers.
//
// A reactor resumes a fiber with `context.resume()`; the fiber receives the
// reactor's continuation and keeps it in `caller`. To suspend, the fiber
// resumes `caller`; whichever reactor resumes it next hands over its own
// continuation. So a fiber always returns to the reactor that is running it,
// whatever core that is.

#include <new>
#include <string>

#include "reactor/cycles.hh"
#include "reactor/runtime_state.hh"
#include "reactor/sanitizer_hooks.hh"

namespace affine::detail {

namespace {

// Boost releases a finished fiber's record through this allocator; the stack
// itself belongs to our pool and is returned by release_fiber().
struct pool_stack_allocator {
  boost::context::stack_context allocate() { return {}; }
  void deallocate(boost::context::stack_context&) noexcept {}
};

void finish_fiber(fiber* self) {
  // Fiber-local values die with the fiber, on its own stack.
  for (unsigned k = 0; k < fls_slots; ++k) {
    if (self->fls[k] != nullptr) fls_destroy(k, self->fls[k]);
    self->fls[k] = nullptr;
  }
  self->join_lock.lock();
  self->finished = true;
  self->joiners.notify_all(/*sync=*/true);  // this fiber is about to end
  self->join_lock.unlock();
}

boost::context::fiber fiber_main(fiber* self, boost::context::fiber&& reactor) {
  self->caller = std::move(reactor);
  core_ctx* c = this_core();
  san::finish_switch(nullptr, &c->asan_stack_bottom, &c->asan_stack_size);
  self->follow(std::move(self->stop));  // on its own stack: the callback registers here
  // The body runs preemptible (count 0) unless spawned otherwise; entry and
  // exit are runtime code (count 1).
  if (self->preemptible) self->no_preempt.store(0, std::memory_order_relaxed);
  try {
    self->entry();
  } catch (...) {
    self->error = std::current_exception();
  }
  self->no_preempt.store(1, std::memory_order_relaxed);
  self->entry = nullptr;
  self->on_stop.reset();
  self->stop = {};
  finish_fiber(self);
  c = this_core();  // may have migrated since entry
  // The end starts a new generation: no waker holds it.
  self->set_state((self->state() >> generation_shift) + 1, phase::running);
  san::start_switch(nullptr, c->asan_stack_bottom, c->asan_stack_size);
  san::switch_to(c->tsan_self);
  return std::move(self->caller);
}

}  // namespace

fiber* create_fiber(runtime_state& rt, unsigned core, std::move_only_function<void()>& fn,
                    const spawn_options& opts, std::stop_token stop, std::source_location where, std::string* why) {
  // Precondition: on a reactor thread of `rt` (the stack lists are per core).
  stack_span s = rt.stacks.take(this_core()->index, why);
  if (s.base == nullptr) return nullptr;

  // Top of the stack: the header, then the control block, then boost's record.
  std::byte* top = s.top();
  auto* header = reinterpret_cast<stack_header*>(top - 64);
  // The header word survives reuse of the stack; it is created once, the
  // first time this stack is handed out (fresh mmap memory is zero).
  if (header->state.load(std::memory_order_relaxed) == 0) new (header) stack_header();
  std::byte* fiber_at = reinterpret_cast<std::byte*>(header) -
                        ((sizeof(fiber) + 63) / 64 * 64);
  auto* f = new (fiber_at) fiber();
  f->header = header;
  f->stack = s;
  f->entry = std::move(fn);
  f->stop = std::move(stop);
  f->pinned = opts.pinned;
  f->preemptible = opts.preemptible;
  core_ctx* here = this_core();
  f->id = std::uint64_t(here->index) << 40 | ++here->fiber_seq;
  f->spawn_file = where.file_name();
  f->spawn_line = where.line();
  f->home_core = core;
  f->last_core = core;
  f->tsan_fiber = san::create_fiber();
  // A fresh generation: a stale timer for this stack's previous fiber fails
  // its compare-and-swap.
  f->set_state((f->state() >> generation_shift) + 1, phase::runnable);

  const std::size_t usable = static_cast<std::size_t>(fiber_at - s.base);
  boost::context::preallocated pre(fiber_at, usable, boost::context::stack_context{});
  pre.sctx.size = usable;
  pre.sctx.sp = fiber_at;
  f->context = boost::context::fiber(std::allocator_arg, pre, pool_stack_allocator{},
                                     [f](boost::context::fiber&& r) { return fiber_main(f, std::move(r)); });
  rt.live_fibers.fetch_add(1, std::memory_order_relaxed);
  return f;
}

void run_fiber(core_ctx& c, fiber* f) {
  c.current = f;
  if (f->last_core != c.index) ++c.c.migrations;
  f->last_core = c.index;
  f->hold_once = false;
  if (f == c.interrupted)
    c.interrupted = nullptr;  // back from an RX interrupt: its slice goes on
  else
    f->slice_start = c.last_cycles;
  ++c.c.fibers_run;
  // It may run long: the tick watches it (preempt.cc). Armed once current
  // and slice_start say who runs, so a tick that comes at once re-arms.
  if (c.tick.made) tick_arm(c);
  void* fake = nullptr;
  san::start_switch(&fake, f->stack.base, f->stack.size);
  san::switch_to(f->tsan_fiber);
  f->context = std::move(f->context).resume();
  san::finish_switch(fake, nullptr, nullptr);
  c.current = nullptr;
  ++c.c.switches;
  // One clock read per switch: it ends this slice and starts the next
  // (an RX interrupt ends no slice: f resumes next, its slice going on).
  c.last_cycles = cycles();
  if (!c.rx_interrupted) {
    if (c.last_cycles - f->slice_start > 2 * c.rt->quota_cycles) ++c.c.quota_overruns;
    if (f->stall_slice == f->slice_start) report_stall_end(c, *f, c.last_cycles - f->slice_start);
  }

  if (!f->context) {  // the fiber returned
    ++c.c.fibers_finished;
    release_fiber(f);
    return;
  }
  if (std::exchange(c.yielded, false)) {
    if (std::exchange(c.quantum_preempted, false))
      c.preempted = f;  // the poll rung first, and what it wakes before f, as the kernel would
    else
      c.rq.push(f);
    return;
  }
  if (std::exchange(c.rx_interrupted, false)) {  // the poll rung, then f again
    c.interrupted = f;
    return;
  }
  if (const int to = std::exchange(c.migrate_to, -1); to >= 0) {
    enqueue(f, unsigned(to));
    return;
  }
  // It parked: parking -> parked, unless a waker already made it runnable,
  // in which case it never really slept and runs again here.
  std::uint32_t s = f->state();
  if ((s & phase_mask) == std::uint32_t(phase::parking) &&
      f->header->state.compare_exchange_strong(s, (s & ~phase_mask) | std::uint32_t(phase::parked),
                                               std::memory_order_acq_rel))
    return;
  c.rq.push(f);
}

void switch_to_reactor(fiber* self) {
  core_ctx* c = this_core();
  void* fake = nullptr;
  san::start_switch(&fake, c->asan_stack_bottom, c->asan_stack_size);
  san::switch_to(c->tsan_self);
  self->caller = std::move(self->caller).resume();
  c = this_core();  // re-read: we may resume on another core
  san::finish_switch(fake, &c->asan_stack_bottom, &c->asan_stack_size);
}

void release_fiber(fiber* f) {
  if (f->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  core_ctx* c = this_core();
  if (c == nullptr) {  // a handle dropped off the reactors: free it on one
    f->refs.store(1, std::memory_order_relaxed);
    post(*current_runtime(), f->last_core, [f] { release_fiber(f); });
    return;
  }
  runtime_state* rt = c->rt;
  san::destroy_fiber(f->tsan_fiber);
  stack_span s = f->stack;
  f->~fiber();
  rt->stacks.give(c->index, s);
  rt->live_fibers.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace affine::detail
