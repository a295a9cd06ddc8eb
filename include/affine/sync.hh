#pragma once
// Synchronisation between fibers, safe across cores: spinlock (short,
// non-blocking sections only), wait queue, mutex, condition variable,
// semaphore, one-shot event with wait_any. Bounded channels are in
// channel.hh.
//
// Blocking calls suspend the calling fiber (never the reactor thread) and
// take an optional deadline (time.hh: a duration, a steady_clock time point
// or now_ns() nanoseconds); they report a timeout by returning false. Never
// suspend while holding a spinlock.

#include <atomic>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>

#include "affine/time.hh"

namespace affine {

namespace detail {
struct fiber;
}

class spinlock {
 public:
  void lock() noexcept {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

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
  // notified (true) or the deadline passes (false). Returns with `held`
  // unlocked.
  bool wait(spinlock& held, deadline until = {});

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
  void lock();
  bool try_lock();
  bool lock_until(deadline until);
  void unlock();

 private:
  spinlock lock_;
  bool held_ = false;
  wait_queue waiters_;
};

class condition_variable {
 public:
  // Precondition: `m` locked by the caller. Returns with `m` locked again;
  // false on timeout. Spurious wakeups do not happen but callers should
  // still re-check their predicate (another fiber may run first).
  bool wait(mutex& m, deadline until = {});
  template <class Pred>
    requires std::predicate<Pred&>  // wait(m, 100ms) is the deadline form
  bool wait(mutex& m, Pred pred, deadline until = {}) {
    while (!pred())
      if (!wait(m, until)) return pred();
    return true;
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
  bool acquire(deadline until = {});
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
  bool wait(deadline until = {});

 private:
  friend std::optional<std::size_t> wait_any(std::span<event* const>, deadline);
  spinlock lock_;
  std::atomic<bool> set_{false};
  wait_queue waiters_;
};

// Suspend until the first of `events` is set or the deadline passes; returns
// the index of a set event (the lowest if several), nullopt on timeout.
std::optional<std::size_t> wait_any(std::span<event* const> events,
                                    deadline until = {});
inline std::optional<std::size_t> wait_any(std::initializer_list<event*> events,
                                           deadline until = {}) {
  return wait_any(std::span<event* const>(events.begin(), events.size()), until);
}

}  // namespace affine
