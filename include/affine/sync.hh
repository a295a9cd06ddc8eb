#pragma once
// Synchronisation between fibers, safe across cores: spinlock (short,
// non-blocking sections only), wait queue, mutex, condition variable,
// semaphore, one-shot event with wait_any. Bounded channels are in
// channel.hh.
//
// Blocking calls suspend the calling fiber (never the reactor thread) and
// take an optional deadline (time.hh: a duration, a steady_clock time point
// or now_ns() nanoseconds); they report a timeout as std::errc::timed_out,
// and a stop request on the fiber's stop token (fiber.hh,
// this_fiber::stop_token) as std::errc::operation_canceled, at once, also
// when the request came before the call. mutex::lock() alone waits
// whatever comes, as std::mutex does. Never suspend while holding a
// spinlock.

#include <atomic>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <system_error>
#include <expected>

#include "affine/fiber.hh"
#include "affine/time.hh"

namespace affine {

namespace detail {
struct fiber;
}

namespace detail {
// Null until some runtime preempts fibers (reactor.preempt = "on"); from
// then on the reactor's hook: hold(true) raises the calling fiber's
// no-preempt count, hold(false) lowers it (off a fiber: nothing). A
// spinlock holds it while locked, so no fiber is preempted holding one
// (another fiber of its core would spin on it for a whole quantum). A
// pointer, so code that takes spinlocks links without the reactor.
using preempt_hold_fn = void (*)(bool hold) noexcept;
inline std::atomic<preempt_hold_fn> preempt_hold{nullptr};
}  // namespace detail

class spinlock {
 public:
  void lock() noexcept {
    if (auto hold = detail::preempt_hold.load(std::memory_order_relaxed)) hold(true);
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  bool try_lock() noexcept {
    const auto hold = detail::preempt_hold.load(std::memory_order_relaxed);
    if (hold) hold(true);
    if (!locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire))
      return true;
    if (hold) hold(false);
    return false;
  }
  void unlock() noexcept {
    locked_.store(false, std::memory_order_release);
    if (auto hold = detail::preempt_hold.load(std::memory_order_relaxed)) hold(false);
  }

 private:
  std::atomic<bool> locked_{false};
};

// How a wait ended: a notifier woke it, its deadline passed, or a stop
// request on the fiber's stop token ended it.
enum class wait_result : std::uint8_t { notified, timed_out, canceled };

// std::errc::timed_out or operation_canceled for a wait that was not
// notified; {} for one that was.
std::error_code error_of(wait_result r);

// Fibers waiting for something guarded by the caller's spinlock. The queue
// has no lock of its own: every call requires the owner's spinlock held.
class wait_queue {
 public:
  struct waiter {
    waiter* next = nullptr;
    waiter* prev = nullptr;
    detail::fiber* f = nullptr;
    std::uint32_t generation = 0;
    bool linked = false;
  };

  wait_queue() = default;
  wait_queue(const wait_queue&) = delete;
  wait_queue& operator=(const wait_queue&) = delete;

  // Precondition: in a fiber, `held` locked. Enqueues the calling fiber,
  // releases `held` once the fiber is off its core, and suspends until
  // notified, the deadline passes, or (stop_mode::cancel) a stop request.
  // Returns with `held` unlocked.
  wait_result wait(spinlock& held, deadline until = {}, stop_mode stop = stop_mode::cancel);

  // Precondition: the owner's spinlock held. Wake the oldest waiter; returns
  // whether one was woken. A waiter that already timed out is skipped.
  // `sync`: the calling fiber is about to block or end, so the wakee may
  // take over its core (the kernel's WF_SYNC; see reactor/policy/place.hh).
  bool notify_one(bool sync = false);
  std::size_t notify_all(bool sync = false);
  bool empty() const { return head_ == nullptr; }

  // Low-level pieces for objects that wait on several queues at once.
  void link(waiter& w);
  void unlink(waiter& w);

 private:
  waiter* head_ = nullptr;
  waiter* tail_ = nullptr;
};

class mutex {
 public:
  void lock();  // waits whatever comes: no deadline, no stop
  bool try_lock();
  std::expected<void, std::error_code> lock_until(deadline until);
  void unlock();

 private:
  spinlock lock_;
  bool held_ = false;
  wait_queue waiters_;
};

class condition_variable {
 public:
  // Precondition: `m` locked by the caller. Returns with `m` locked again,
  // also on a timeout or a stop. Spurious wakeups do not happen but callers
  // should still re-check their predicate (another fiber may run first).
  std::expected<void, std::error_code> wait(mutex& m, deadline until = {});
  // Until pred() holds: {} when it does, else the error of the wait that
  // ended it (pred() is looked at once more first).
  template <class Pred>
    requires std::predicate<Pred&>  // wait(m, 100ms) is the deadline form
  std::expected<void, std::error_code> wait(mutex& m, Pred pred, deadline until = {}) {
    while (!pred())
      if (auto r = wait(m, until); !r) {
        if (pred()) return {};
        return r;
      }
    return {};
  }
  void notify_one();
  void notify_all();

 private:
  spinlock lock_;
  wait_queue waiters_;
};

class semaphore {
 public:
  explicit semaphore(std::uint64_t initial = 0) : count_(initial) {}
  std::expected<void, std::error_code> acquire(deadline until = {});
  bool try_acquire();
  void release(std::uint64_t n = 1);
  std::uint64_t available() const;

 private:
  mutable spinlock lock_;
  std::uint64_t count_;
  wait_queue waiters_;
};

// A one-shot event: set once, stays set; any number of fibers wait for it,
// alone or as one of several (wait_any).
class event {
 public:
  void set();
  bool is_set() const { return set_.load(std::memory_order_acquire); }
  // stop_mode::ignore: only set() or the deadline ends it (a wait that
  // must see its event, such as one that guards a destructor).
  std::expected<void, std::error_code> wait(deadline until = {}, stop_mode stop = stop_mode::cancel);

 private:
  friend std::expected<std::size_t, std::error_code> wait_any(std::span<event* const>, deadline);
  spinlock lock_;
  std::atomic<bool> set_{false};
  wait_queue waiters_;
};

// Suspend until the first of `events` is set, the deadline passes or a stop
// comes; returns the index of a set event (the lowest if several; a set
// event wins over a timeout or a stop that came at the same time).
std::expected<std::size_t, std::error_code> wait_any(std::span<event* const> events,
                                                     deadline until = {});
inline std::expected<std::size_t, std::error_code> wait_any(std::initializer_list<event*> events,
                                                            deadline until = {}) {
  return wait_any(std::span<event* const>(events.begin(), events.size()), until);
}

}  // namespace affine
