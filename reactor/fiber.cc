// The fiber API: spawn, handles, yield, sleep, fiber-local storage.

#include <array>
#include <cassert>
#include <semaphore>
#include <stdexcept>
#include <string>

#include "affine/log.hh"

#include "reactor/cycles.hh"
#include "reactor/runtime_state.hh"

namespace affine {

std::expected<fiber_handle, std::error_code> spawn(std::move_only_function<void()> fn, spawn_options opts,
                                                   std::source_location where) {
  const detail::no_preempt guard;
  detail::runtime_state* rt = detail::current_runtime();
  if (rt == nullptr) return std::unexpected(std::make_error_code(std::errc::operation_not_permitted));
  detail::core_ctx* here = detail::this_core();
  const bool on_reactor = here != nullptr && here->rt == rt;
  const unsigned core = opts.core.value_or(on_reactor ? here->index : 0);
  if (core >= rt->cores.size()) return std::unexpected(std::make_error_code(std::errc::invalid_argument));
  // The spawner's token, unless the options name one.
  std::stop_token stop = opts.stop ? std::move(*opts.stop)
                         : on_reactor && here->current != nullptr ? here->current->stop
                                                                  : std::stop_token{};
  std::string why;
  detail::fiber* f = nullptr;
  if (on_reactor) {
    f = detail::create_fiber(*rt, core, fn, opts, std::move(stop), where, &why);
    if (f != nullptr) {
      ++here->c.fibers_spawned;
      detail::enqueue(f, core);
    }
  } else {
    // From outside the reactors: the target reactor creates the fiber (stack
    // lists are per core) while this thread waits.
    std::binary_semaphore done(0);
    detail::post(*rt, core, [&] {
      f = detail::create_fiber(*rt, core, fn, opts, std::move(stop), where, &why);
      if (f != nullptr) {
        ++detail::this_core()->c.fibers_spawned;
        detail::enqueue(f, core);
      }
      done.release();
    });
    done.acquire();
  }
  if (f == nullptr) {
    AFFINE_LOG_WARN("affine::spawn: no stack for a fiber: {}", why);
    return std::unexpected(std::make_error_code(std::errc::not_enough_memory));
  }
  return fiber_handle(f);
}

fiber_handle& fiber_handle::operator=(fiber_handle&& o) noexcept {
  const detail::no_preempt guard;
  if (this != &o) {
    if (f_ != nullptr) detach();
    f_ = std::exchange(o.f_, nullptr);
  }
  return *this;
}

fiber_handle::~fiber_handle() {
  if (f_ != nullptr) detach();
}

std::expected<void, std::error_code> fiber_handle::join(stop_mode stop) {
  const detail::no_preempt guard;
  assert(f_ != nullptr && this_fiber::in_fiber());
  detail::fiber* f = f_;
  f->join_lock.lock();
  if (f->finished) {
    f->join_lock.unlock();
  } else {
    // Woken only by its end (finish_fiber notifies under join_lock), or not at all.
    const wait_result r = f->joiners.wait(f->join_lock, no_deadline, stop);
    if (r != wait_result::notified) return std::unexpected(error_of(r));
  }
  f_ = nullptr;
  std::exception_ptr error = f->error;
  detail::release_fiber(f);
  if (error) std::rethrow_exception(error);
  return {};
}

void fiber_handle::detach() {
  const detail::no_preempt guard;
  detail::release_fiber(std::exchange(f_, nullptr));
}

namespace detail {

void run_pinned_on(unsigned core, std::move_only_function<void()> fn) {
  auto f = spawn(std::move(fn), {.core = core, .pinned = true, .stop = std::stop_token{}});
  if (!f) throw std::system_error(f.error(), "affine::submit_to");
  f->join(stop_mode::ignore);  // fn refers to the caller's frame: wait for its end
}

}  // namespace detail

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
  const detail::no_preempt guard;
  detail::core_ctx* c = detail::this_core();
  assert(c != nullptr && c->current != nullptr);
  c->yielded = true;
  detail::switch_to_reactor(c->current);
}

bool maybe_yield() {
  const detail::no_preempt guard;
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
  const detail::no_preempt guard;
  detail::core_ctx* c = detail::this_core();
  assert(c != nullptr && c->current != nullptr && core < c->rt->cores.size());
  if (c->current->pinned || core == c->index) return;
  c->migrate_to = int(core);
  c->current->hold_once = true;  // the target's pinned list: no thief takes it first
  detail::switch_to_reactor(c->current);
}

std::expected<void, std::error_code> sleep_until(deadline deadline_ns) {
  const detail::no_preempt guard;
  if (stop_requested()) return std::unexpected(std::make_error_code(std::errc::operation_canceled));
  if (deadline_ns <= now_ns()) {
    yield();
    return {};
  }
  if (detail::park(detail::prepare_park(), deadline_ns, stop_mode::cancel) == detail::wake_reason::canceled)
    return std::unexpected(std::make_error_code(std::errc::operation_canceled));
  return {};
}

std::stop_token stop_token() {
  const detail::no_preempt guard;
  assert(in_fiber());
  return detail::this_core()->current->stop;
}

bool stop_requested() {
  detail::core_ctx* c = detail::this_core();
  return c != nullptr && c->current != nullptr && c->current->stop.stop_requested();
}

stop_scope::stop_scope(std::stop_token token) {
  const detail::no_preempt guard;
  assert(in_fiber());
  detail::fiber* self = detail::this_core()->current;
  outer_ = self->stop;
  self->follow(std::move(token));
}

stop_scope::~stop_scope() {
  const detail::no_preempt guard;
  detail::this_core()->current->follow(std::move(outer_));
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
