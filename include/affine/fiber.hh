#pragma once
// Fibers: spawn, yield, sleep, join, cancellation, fiber-local storage.
//
// Cancellation: every fiber follows a std::stop_token, by default the one
// of the fiber that spawned it (none for a fiber spawned from outside the
// reactors; affine::run gives its main fiber one that SIGINT and SIGTERM
// stop). Once a stop is requested on it, every blocking call of the fiber
// (accept, connect, read, write, wait_any, sleep, join, channel and sync
// waits; not mutex::lock) returns std::errc::operation_canceled at once,
// whether it was waiting already or is called later. A fiber that has work
// to finish after a stop (a farewell write, joining its children) does it
// in a stop_scope with a token of its own, or none:
//
//   this_fiber::stop_scope drain{std::stop_token{}};  // no stop ends these calls
//   s.write(goodbye, 1s);
//
// A fiber is a user-level thread with its own guarded stack (reactor.stack_kib).
// Unless pinned it may resume on any reactor core: after any call that can
// suspend (yield, sleep, join, a wait on a sync object, socket I/O), never
// assume the same core or keep pointers to per-core data (DESIGN.md section 4).

#include <chrono>
#include <cstdint>
#include <functional>
#include <expected>
#include <optional>
#include <source_location>
#include <stop_token>
#include <system_error>
#include <type_traits>
#include <utility>

#include "affine/time.hh"

namespace affine {

namespace detail {
struct fiber;
}

// Whether a wait ends on a stop request (cancel, what the API does) or
// waits on (ignore: for what must complete, such as taking a lock or
// joining a fiber that uses the caller's frame).
enum class stop_mode : std::uint8_t { cancel, ignore };

struct spawn_options {
  // Core (reactor index, 0..cores()-1) to start on; default: the spawning
  // fiber's core, or core 0 from outside the reactors.
  std::optional<unsigned> core = std::nullopt;
  // Never migrate: placement and the balancer leave it on `core`.
  bool pinned = false;
  // The token its blocking calls follow; unset: the spawning fiber's (see
  // above). std::stop_token{} follows none.
  std::optional<std::stop_token> stop = std::nullopt;
  // With reactor.preempt = "on", a fiber that runs past its quantum while
  // other work waits on its core is preempted (docs/reactor.md,
  // "Preemption"). false: this fiber only ever gives its core up itself,
  // for code that must not be interrupted (it holds an OS mutex another
  // fiber of its core may want, or calls a library that is not reentrant).
  bool preemptible = true;
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
  // A stop request on the caller's token ends the wait with
  // operation_canceled, the handle still joinable; with stop_mode::ignore
  // it waits for the end whatever comes. Precondition: called from a fiber.
  std::expected<void, std::error_code> join(stop_mode stop = stop_mode::cancel);
  void detach();

 private:
  detail::fiber* f_ = nullptr;
};

// Start `fn` as a new fiber. Callable from a fiber or from any thread while a
// runtime is running. Errors, with `fn` not run: not_enough_memory (no
// stack could be had: the vm.max_map_count budget or memory, logged with
// the reason), invalid_argument (`core` is not a reactor core),
// operation_not_permitted (no runtime is running).
// `where` names the spawn site in stall reports.
std::expected<fiber_handle, std::error_code> spawn(std::move_only_function<void()> fn, spawn_options opts = {},
                                                   std::source_location where = std::source_location::current());

namespace this_fiber {
// Give the core to the next runnable fiber; this fiber stays runnable.
void yield();
// Yield if this fiber has used up its task quota (reactor.task_quota_us) and
// another fiber is runnable here. Returns whether it yielded. Cheap: call it
// in long loops; a fiber that never does is counted as a quota overrun.
bool maybe_yield();
// {} at the deadline, or operation_canceled on a stop request.
std::expected<void, std::error_code> sleep_until(deadline until);
// Move the calling fiber to reactor `core` now (an explicit migration, for
// code that knows better than the scheduler, and for tests). No-op for a
// pinned fiber. Returns with the fiber running on `core` (no balancer can
// take it before it has run there).
void migrate(unsigned core);
inline std::expected<void, std::error_code> sleep_for(std::chrono::nanoseconds d) {
  return sleep_until(d);
}
// The stop token the calling fiber's blocking calls follow now, and
// whether a stop has been requested on it.
std::stop_token stop_token();
bool stop_requested();

// For its lifetime the calling fiber follows `token` instead (an empty
// one: no stop ends its calls); then the one before again. Fibers it
// spawns meanwhile inherit `token`. Scopes nest; one lives on the stack of
// the fiber that made it.
class stop_scope {
 public:
  explicit stop_scope(std::stop_token token);
  ~stop_scope();
  stop_scope(const stop_scope&) = delete;
  stop_scope& operator=(const stop_scope&) = delete;

 private:
  std::stop_token outer_;
};
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
