#pragma once
// Time-slice preemption and stall reports (internal; docs/reactor.md,
// "Preemption"). Each reactor has a one-shot tick timer that sends its own
// thread `tick_signal` while a fiber runs; the handler, on the fiber's stack,
// either lets the fiber go on (and re-arms for when its slice would be
// over), records a stall, or, when the fiber is past its quantum, other work
// waits on the core and the interrupted code is safe to leave, switches to
// the reactor as a yield would. The kernel's signal frame on the fiber's
// stack keeps every register and the FP/SIMD state; returning from the
// handler, on whatever core the fiber resumed, restores them.

#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <expected>
#include <string>

namespace affine::detail {

struct core_ctx;
struct fiber;
struct runtime_state;

// SIGURG, as Go chose it for the same job: ignored by default, and rarely
// used (out-of-band TCP data on kernel sockets that asked for it). A SIGURG
// that is not a reactor's tick goes to the handler that was there before.
inline constexpr int tick_signal = SIGURG;

// Why a preemption that was due did not happen (core_counters::preempt_refused).
enum class refusal : std::uint8_t {
  runtime,    // inside the runtime or the stack, or holding a spinlock
  outside,    // executing code of another object: libc, libstdc++, the loader, DPDK, ...
  switching,  // not on the fiber's stack: a switch in progress
  count_
};

// A reactor's tick. Touched by its own thread only, the handler included.
struct tick_state {
  timer_t id{};
  bool made = false;
  std::atomic<bool> armed{false};       // cleared by every tick
  std::uint64_t due = 0;                // cycles() when the armed tick comes
  sigset_t sleep_mask{};                // the thread's mask plus tick_signal: epoll sleeps with it
};

// A stall the handler captured, for the reporter thread.
struct stall_capture {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 filled and waiting for the reporter
  std::uint64_t fiber_id = 0;
  const char* spawn_file = "";
  std::uint32_t spawn_line = 0;
  std::uint64_t ran_us = 0;
  int frames = 0;
  void* frame[32] = {};
};

// Once per process, before the first tick: installs the handler, finds the
// code that may be preempted (the program's and affine's own object), and
// loads the unwinder so a backtrace from the handler allocates nothing.
std::expected<void, std::string> tick_process_setup();
// On the reactor thread, before its loop: its timer, aimed at its thread.
std::expected<void, std::string> tick_start(core_ctx& c);
void tick_stop(core_ctx& c);
// From run_fiber, with the fiber current: arms the tick for when that fiber
// needs it, unless it is armed to come sooner.
void tick_arm(core_ctx& c);

// The stall reporter: a thread per runtime that formats what the handlers
// captured (reactor.stall_report_ms). Started with the runtime, stopped
// after the reactors.
std::expected<void, std::string> stall_reporter_start(runtime_state& rt);
void stall_reporter_stop(runtime_state& rt);
// The reactor, when a fiber that was reported comes back: how long it held the core.
void report_stall_end(core_ctx& c, const fiber& f, std::uint64_t ran_cycles);

// The spinlock's and the log sink's hook (sync.hh preempt_hold): raises
// (hold) or lowers the running fiber's no-preempt count.
void hold_running_fiber(bool hold) noexcept;

// Runtime code the calling fiber must not be preempted in: a socket call,
// a wait, a spawn. Raises the fiber's no-preempt count for the scope; off a
// fiber, or while no runtime preempts, it does nothing.
class no_preempt {
 public:
  no_preempt() noexcept;
  ~no_preempt();
  no_preempt(const no_preempt&) = delete;
  no_preempt& operator=(const no_preempt&) = delete;

 private:
  fiber* f_;
};

}  // namespace affine::detail
