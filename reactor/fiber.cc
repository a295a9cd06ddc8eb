// The fiber API: spawn, handles, yield, sleep, fiber-local storage.

#include <array>
#include <cassert>
#include <semaphore>
#include <stdexcept>

#include "reactor/cycles.hh"
#include "reactor/runtime_state.hh"

namespace affine {

fiber_handle spawn(std::move_only_function<void()> fn, spawn_options opts) {
  detail::runtime_state* rt = detail::current_runtime();
  if (rt == nullptr) throw std::logic_error("affine::spawn: no runtime is running");
  detail::core_ctx* here = detail::this_core();
  const bool on_reactor = here != nullptr && here->rt == rt;
  const unsigned core = opts.core.value_or(on_reactor ? here->index : 0);
  if (core >= rt->cores.size())
    throw std::out_of_range("affine::spawn: core " + std::to_string(core) + " is not a reactor core");

  if (on_reactor) {
    detail::fiber* f = detail::create_fiber(*rt, core, std::move(fn), opts.pinned);
    ++here->c.fibers_spawned;
    detail::enqueue(f, core);
    return fiber_handle(f);
  }
  // From outside the reactors: the target reactor creates the fiber (stack
  // lists are per core) while this thread waits.
  detail::fiber* f = nullptr;
  std::exception_ptr error;
  std::binary_semaphore done(0);
  detail::post(*rt, core, [&] {
    try {
      f = detail::create_fiber(*rt, core, std::move(fn), opts.pinned);
      ++detail::this_core()->c.fibers_spawned;
      detail::enqueue(f, core);
    } catch (...) {
      error = std::current_exception();
    }
    done.release();
  });
  done.acquire();
  if (error) std::rethrow_exception(error);
  return fiber_handle(f);
}

fiber_handle& fiber_handle::operator=(fiber_handle&& o) noexcept {
  if (this != &o) {
    if (f_ != nullptr) detach();
    f_ = std::exchange(o.f_, nullptr);
  }
  return *this;
}

fiber_handle::~fiber_handle() {
  if (f_ != nullptr) detach();
}

void fiber_handle::join() {
  assert(f_ != nullptr && this_fiber::in_fiber());
  detail::fiber* f = std::exchange(f_, nullptr);
  f->join_lock.lock();
  if (f->finished) {
    f->join_lock.unlock();
  } else {
    f->joiners.wait(f->join_lock);
  }
  std::exception_ptr error = f->error;
  detail::release_fiber(f);
  if (error) std::rethrow_exception(error);
}

void fiber_handle::detach() { detail::release_fiber(std::exchange(f_, nullptr)); }

namespace this_fiber {

bool in_fiber() {
  detail::core_ctx* c = detail::this_core();
  return c != nullptr && c->current != nullptr;
}

unsigned core() {
  assert(in_fiber());
  return detail::this_core()->index;
}

void yield() {
  detail::core_ctx* c = detail::this_core();
  assert(c != nullptr && c->current != nullptr);
  c->yielded = true;
  detail::switch_to_reactor(c->current);
}

bool maybe_yield() {
  detail::core_ctx* c = detail::this_core();
  detail::fiber* self = c->current;
  if (detail::cycles() - self->slice_start < c->rt->quota_cycles) return false;
  if (c->rq.empty()) {
    // Nothing else wants the core: start a new slice instead of yielding.
    self->slice_start = detail::cycles();
    return false;
  }
  ++c->c.preempt_yields;
  yield();
  return true;
}

void migrate(unsigned core) {
  detail::core_ctx* c = detail::this_core();
  assert(c != nullptr && c->current != nullptr && core < c->rt->cores.size());
  if (c->current->pinned || core == c->index) return;
  c->migrate_to = int(core);
  c->current->hold_once = true;  // the target's pinned list: no thief takes it first
  detail::switch_to_reactor(c->current);
}

void sleep_until(deadline deadline_ns) {
  if (deadline_ns <= now_ns()) {
    yield();
    return;
  }
  detail::park(detail::prepare_park(), deadline_ns);
}

}  // namespace this_fiber

namespace detail {

namespace {
std::array<void (*)(void*), fls_slots> fls_destructors{};
std::atomic<unsigned> fls_next{0};
}  // namespace

unsigned fls_register(void (*destroy)(void*)) {
  const unsigned key = fls_next.fetch_add(1, std::memory_order_relaxed);
  if (key >= fls_slots) throw std::length_error("affine::fiber_local: at most 8 fiber_local objects");
  fls_destructors[key] = destroy;
  return key;
}

void*& fls_slot(unsigned key) {
  assert(this_fiber::in_fiber() && key < fls_slots);
  return this_core()->current->fls[key];
}

void fls_destroy(unsigned key, void* value) { fls_destructors[key](value); }

}  // namespace detail
}  // namespace affine
