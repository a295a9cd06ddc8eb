// Wait queue, mutex, condition variable, semaphore, event and wait_any.
//
// All of them park through prepare_park/park (wake.cc): the fiber registers
// on the queue under the owner's spinlock, drops the lock, then parks; a
// notifier that gets there before the fiber is off its core simply finds it
// "parking" and the fiber does not sleep at all. Ownership of a mutex or a
// semaphore unit is handed to the woken fiber directly (no barging), and a
// waiter that timed out is skipped by notifiers, so no notification is lost.

#include <cassert>
#include <memory>

#include "affine/sync.hh"
#include "reactor/runtime_state.hh"

namespace affine {

namespace {

detail::fiber* self() {
  detail::core_ctx* c = detail::this_core();
  assert(c != nullptr && c->current != nullptr && "blocking call outside a fiber");
  return c->current;
}

wait_result result_of(detail::wake_reason r) {
  switch (r) {
    case detail::wake_reason::notified: return wait_result::notified;
    case detail::wake_reason::timeout: return wait_result::timed_out;
    case detail::wake_reason::canceled: return wait_result::canceled;
  }
  return wait_result::timed_out;
}

std::expected<void, std::error_code> as_expected(wait_result r) {
  if (r == wait_result::notified) return {};
  return std::unexpected(error_of(r));
}

// After a timeout or a stop, take the waiter off its queue if no notifier did.
void unlink_if_linked(spinlock& lock, wait_queue& q, wait_queue::waiter& w) {
  lock.lock();
  if (w.linked) q.unlink(w);
  lock.unlock();
}

}  // namespace

std::error_code error_of(wait_result r) {
  switch (r) {
    case wait_result::notified: return {};
    case wait_result::timed_out: return std::make_error_code(std::errc::timed_out);
    case wait_result::canceled: return std::make_error_code(std::errc::operation_canceled);
  }
  return {};
}

void wait_queue::link(waiter& w) {
  w.next = nullptr;
  w.prev = tail_;
  (tail_ != nullptr ? tail_->next : head_) = &w;
  tail_ = &w;
  w.linked = true;
}

void wait_queue::unlink(waiter& w) {
  (w.prev != nullptr ? w.prev->next : head_) = w.next;
  (w.next != nullptr ? w.next->prev : tail_) = w.prev;
  w.next = w.prev = nullptr;
  w.linked = false;
}

wait_result wait_queue::wait(spinlock& held, deadline deadline_ns, stop_mode stop) {
  const detail::no_preempt guard;
  waiter w;
  w.f = self();
  w.generation = detail::prepare_park();
  link(w);
  held.unlock();
  const wait_result r = result_of(detail::park(w.generation, deadline_ns, stop));
  if (r != wait_result::notified) unlink_if_linked(held, *this, w);
  return r;
}

bool wait_queue::notify_one(bool sync) {
  const detail::no_preempt guard;
  if (head_ == nullptr) return false;  // the common case on the data path: nobody waits
  const auto kind = detail::current_waker_kind();
  while (waiter* w = head_) {
    unlink(*w);
    // Copy before waking: once woken, the waiter's stack frame may be gone.
    detail::fiber* f = w->f;
    const std::uint32_t gen = w->generation;
    if (detail::try_wake(f->header, f, gen, detail::wake_reason::notified, kind, sync)) return true;
  }
  return false;
}

std::size_t wait_queue::notify_all(bool sync) {
  std::size_t n = 0;
  while (notify_one(sync)) ++n;
  return n;
}

// ---- mutex ------------------------------------------------------------------

void mutex::lock() {
  const detail::no_preempt guard;
  lock_.lock();
  if (!held_) {
    held_ = true;
    lock_.unlock();
    return;
  }
  waiters_.wait(lock_, no_deadline, stop_mode::ignore);  // woken = ownership handed over
}

bool mutex::try_lock() {
  const detail::no_preempt guard;
  lock_.lock();
  const bool got = !held_;
  held_ = true;
  lock_.unlock();
  return got;
}

std::expected<void, std::error_code> mutex::lock_until(deadline deadline_ns) {
  const detail::no_preempt guard;
  lock_.lock();
  if (!held_) {
    held_ = true;
    lock_.unlock();
    return {};
  }
  return as_expected(waiters_.wait(lock_, deadline_ns));  // notified = ownership handed over
}

void mutex::unlock() {
  const detail::no_preempt guard;
  lock_.lock();
  assert(held_);
  if (!waiters_.notify_one()) held_ = false;
  lock_.unlock();
}

// ---- condition variable -------------------------------------------------------

std::expected<void, std::error_code> condition_variable::wait(mutex& m, deadline deadline_ns) {
  const detail::no_preempt guard;
  wait_queue::waiter w;
  w.f = self();
  lock_.lock();
  w.generation = detail::prepare_park();
  waiters_.link(w);
  m.unlock();  // after linking: a notify after this unlock finds us
  lock_.unlock();
  const wait_result r = result_of(detail::park(w.generation, deadline_ns, stop_mode::cancel));
  if (r != wait_result::notified) unlink_if_linked(lock_, waiters_, w);
  m.lock();
  return as_expected(r);
}

void condition_variable::notify_one() {
  const detail::no_preempt guard;
  lock_.lock();
  waiters_.notify_one();
  lock_.unlock();
}

void condition_variable::notify_all() {
  const detail::no_preempt guard;
  lock_.lock();
  waiters_.notify_all();
  lock_.unlock();
}

// ---- semaphore ------------------------------------------------------------------

std::expected<void, std::error_code> semaphore::acquire(deadline deadline_ns) {
  const detail::no_preempt guard;
  lock_.lock();
  if (count_ > 0) {
    --count_;
    lock_.unlock();
    return {};
  }
  return as_expected(waiters_.wait(lock_, deadline_ns));  // notified = a unit handed over
}

bool semaphore::try_acquire() {
  const detail::no_preempt guard;
  lock_.lock();
  const bool got = count_ > 0;
  if (got) --count_;
  lock_.unlock();
  return got;
}

void semaphore::release(std::uint64_t n) {
  const detail::no_preempt guard;
  lock_.lock();
  for (; n > 0 && waiters_.notify_one(); --n) {
  }
  count_ += n;
  lock_.unlock();
}

std::uint64_t semaphore::available() const {
  lock_.lock();
  const std::uint64_t n = count_;
  lock_.unlock();
  return n;
}

// ---- event and wait_any -------------------------------------------------------

void event::set() {
  const detail::no_preempt guard;
  lock_.lock();
  set_.store(true, std::memory_order_release);
  waiters_.notify_all();
  lock_.unlock();
}

std::expected<void, std::error_code> event::wait(deadline deadline_ns, stop_mode stop) {
  const detail::no_preempt guard;
  lock_.lock();
  if (is_set()) {
    lock_.unlock();
    return {};
  }
  const wait_result r = waiters_.wait(lock_, deadline_ns, stop);
  // A woken waiter may run before set() has left notify_all(), which still
  // reads this event; the waiter's owner may destroy the event as soon as
  // wait() returns (an event on a stack frame, set by the last of a group of
  // fibers). Passing through the lock set() holds waits it out.
  lock_.lock();
  lock_.unlock();
  if (is_set()) return {};
  return as_expected(r == wait_result::notified ? wait_result::timed_out : r);
}

std::expected<std::size_t, std::error_code> wait_any(std::span<event* const> events, deadline deadline_ns) {
  const detail::no_preempt guard;
  const std::size_t n = events.size();
  wait_queue::waiter local[8];
  std::unique_ptr<wait_queue::waiter[]> heap;
  wait_queue::waiter* w = local;
  if (n > std::size(local)) w = (heap = std::make_unique<wait_queue::waiter[]>(n)).get();

  detail::fiber* me = self();
  const std::uint32_t gen = detail::prepare_park();
  std::size_t linked = 0;
  bool already = false;
  for (; linked < n; ++linked) {
    event& e = *events[linked];
    e.lock_.lock();
    if (e.is_set()) {
      e.lock_.unlock();
      already = true;
      break;
    }
    w[linked].f = me;
    w[linked].generation = gen;
    e.waiters_.link(w[linked]);
    e.lock_.unlock();
  }
  wait_result r = wait_result::timed_out;
  if (already) {
    // Not going to sleep: leave the parking generation as running.
    me->set_state(gen, detail::phase::running);
  } else {
    r = result_of(detail::park(gen, deadline_ns, stop_mode::cancel));
  }
  for (std::size_t i = 0; i < linked; ++i)
    unlink_if_linked(events[i]->lock_, events[i]->waiters_, w[i]);
  for (std::size_t i = 0; i < n; ++i)
    if (events[i]->is_set()) return i;
  return std::unexpected(error_of(r == wait_result::canceled ? r : wait_result::timed_out));
}

}  // namespace affine
