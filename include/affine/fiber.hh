#pragma once
// Fibers: spawn, yield, sleep, join, fiber-local storage.
//
// A fiber is a user-level thread with its own guarded stack (reactor.stack_kib).
// Unless pinned it may resume on any reactor core: after any call that can
// suspend (yield, sleep, join, a wait on a sync object, socket I/O), never
// assume the same core or keep pointers to per-core data (DESIGN.md section 4).

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "affine/time.hh"

namespace affine {

namespace detail {
struct fiber;
}

struct spawn_options {
  // Core (reactor index, 0..cores()-1) to start on; default: the spawning
  // fiber's core, or core 0 from outside the reactors.
  std::optional<unsigned> core;
  // Never migrate: placement and the balancer leave it on `core`.
  bool pinned = false;
};

class fiber_handle {
 public:
  fiber_handle() = default;
  explicit fiber_handle(detail::fiber* f) : f_(f) {}
  fiber_handle(fiber_handle&& o) noexcept : f_(std::exchange(o.f_, nullptr)) {}
  fiber_handle& operator=(fiber_handle&& o) noexcept;
  ~fiber_handle();  // detaches a joinable handle

  bool joinable() const { return f_ != nullptr; }
  // Suspends the calling fiber until the fiber ends; rethrows what it threw.
  // Precondition: called from a fiber.
  void join();
  void detach();

 private:
  detail::fiber* f_ = nullptr;
};

// Start `fn` as a new fiber. Callable from a fiber or from any thread while a
// runtime is running. Throws std::system_error when no stack can be had (the
// message says why: the vm.max_map_count budget or memory).
fiber_handle spawn(std::move_only_function<void()> fn, spawn_options opts = {});

namespace this_fiber {
// Give the core to the next runnable fiber; this fiber stays runnable.
void yield();
// Yield if this fiber has used up its task quota (reactor.task_quota_us) and
// another fiber is runnable here. Returns whether it yielded. Cheap: call it
// in long loops; a fiber that never does is counted as a quota overrun.
bool maybe_yield();
void sleep_until(deadline until);
// Move the calling fiber to reactor `core` now (an explicit migration, for
// code that knows better than the scheduler, and for tests). No-op for a
// pinned fiber. Returns with the fiber running on `core` (no balancer can
// take it before it has run there).
void migrate(unsigned core);
inline void sleep_for(std::chrono::nanoseconds d) {
  sleep_until(now_ns() + static_cast<std::uint64_t>(d.count()));
}
// The reactor index the calling fiber runs on right now (may change after any
// suspension point).
unsigned core();
// True inside a fiber.
bool in_fiber();
}  // namespace this_fiber

// Fiber-local storage: one T per fiber, created on first access, destroyed
// when the fiber ends. At most 8 fiber_local objects in a process.
namespace detail {
unsigned fls_register(void (*destroy)(void*));
void*& fls_slot(unsigned key);
}  // namespace detail

template <class T>
class fiber_local {
 public:
  fiber_local() : key_(detail::fls_register([](void* p) { delete static_cast<T*>(p); })) {}
  T& get() {
    void*& s = detail::fls_slot(key_);
    if (s == nullptr) s = new T();
    return *static_cast<T*>(s);
  }
  T* operator->() { return &get(); }
  T& operator*() { return get(); }

 private:
  unsigned key_;
};

}  // namespace affine
