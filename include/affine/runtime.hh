#pragma once
// The runtime: one reactor thread per configured core, each pinned to its
// core, each running the loop of DESIGN.md section 2. Fibers run on the
// reactors; the calling thread only starts and stops them.

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "affine/fiber.hh"
#include "affine/poller.hh"
#include "affine/stats.hh"
#include "affine/topology.hh"

namespace affine {

namespace policy {
struct policy_config;
}

// What a reactor with nothing to do does (reactor.idle).
enum class idle_mode : std::uint8_t {
  adaptive,  // spin up to spin_us while spinning pays and no other task waits for the CPU, then sleep
  sleep,     // spin spin_us every time, then sleep (the fixed budget)
  spin,      // never sleep (a core of its own)
};

struct runtime_options {
  // The reactor cores, as topology core ids (numa's parse_core_list or
  // first_cores). Empty: every core of the topology.
  std::vector<core_id> cores;
  bool pin_threads = true;           // pin each reactor to its core's os_cpu
  idle_mode idle = idle_mode::adaptive;  // reactor.idle
  std::uint32_t spin_us = 50;        // reactor.spin_us: spin at most this long before sleeping
  std::size_t stack_bytes = 64 * 1024;
  std::uint32_t task_quota_us = 500;  // reactor.task_quota_us: a fiber's slice (maybe_yield)
  // reactor.preempt: preempt a fiber that runs past its quantum while other
  // work waits on its core (docs/reactor.md, "Preemption").
  bool preempt = false;
  std::uint32_t quantum_us = 2000;  // reactor.quantum_us: with preempt, the preemption quantum
  // reactor.rx_interrupt_us: with preempt, interrupt a fiber that runs this
  // long on a core with pollers for one poll turn; 0: off.
  std::uint32_t rx_interrupt_us = 0;
  // reactor.stall_report_ms: report a fiber that holds its core this long
  // without yielding (logged with a backtrace, counted as `stalls`); 0: off.
  std::uint32_t stall_report_ms = 100;
  std::uint32_t balance_interval_us = 1000;  // sched.balance_interval_us; 0 = off
  // Run on each reactor thread before its loop starts (a driver registers
  // the thread with its library there, e.g. as a DPDK lcore).
  std::function<void(unsigned reactor)> on_reactor_start;
};

class runtime {
 public:
  // Starts the reactors. `topo` must outlive the runtime. `policy` null means
  // the defaults. Errors: a core not in the topology, pinning refused, no
  // eventfd/epoll.
  static std::expected<std::unique_ptr<runtime>, std::string> start(
      const topology& topo, runtime_options opts, const policy::policy_config* policy = nullptr);
  ~runtime();  // stops the reactors and joins their threads
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // Run `fn` as a fiber on core 0 and block the calling (non-reactor) thread
  // until it returns; its result or exception comes back here (a
  // std::system_error when the fiber cannot be spawned).
  template <class F>
  auto run(F&& fn) -> std::invoke_result_t<F&> {
    using R = std::invoke_result_t<F&>;
    if constexpr (std::is_void_v<R>) {
      run_blocking([&] { fn(); });
    } else {
      std::optional<R> out;
      run_blocking([&] { out.emplace(fn()); });
      return std::move(*out);
    }
  }

  // Register a poller on a core's reactor (before or while running). The
  // poller must stay alive until removed or the runtime stops.
  void add_poller(unsigned core, poller* p);
  void remove_poller(unsigned core, poller* p);

  unsigned cores() const;
  core_id topology_core(unsigned reactor_core) const;
  const topology& topo() const;
  core_counters counters(unsigned core) const;
  // Leak checks for tests' teardown: fibers alive, stacks out of the pool,
  // timers armed on any core. All zero once every fiber has ended.
  std::size_t live_fibers() const;
  std::size_t stacks_in_use() const;
  std::size_t timers_armed() const;

  struct impl;

 private:
  explicit runtime(std::unique_ptr<impl> p);
  void run_blocking(std::move_only_function<void()> fn);
  std::unique_ptr<impl> impl_;
};

namespace detail {
// Spawns `fn` pinned on `core`, following no stop token, and joins it:
// throws std::system_error when it cannot be spawned.
void run_pinned_on(unsigned core, std::move_only_function<void()> fn);
}  // namespace detail

// Run `fn` on reactor `core` (in a fiber pinned there) and return its result
// to the calling fiber, which waits for it to the end (a stop request does
// not cut it short: `fn` refers to the caller's frame). Throws
// std::system_error when no fiber can be spawned. Precondition: called in a
// fiber.
template <class F>
auto submit_to(unsigned core, F&& fn) -> std::invoke_result_t<F&> {
  using R = std::invoke_result_t<F&>;
  if constexpr (std::is_void_v<R>) {
    detail::run_pinned_on(core, [&] { fn(); });
  } else {
    std::optional<R> out;
    detail::run_pinned_on(core, [&] { out.emplace(fn()); });
    return std::move(*out);
  }
}

}  // namespace affine
