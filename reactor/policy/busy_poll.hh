#pragma once
// Whether a fiber busy-polling its RX queue for data should go on spinning:
// sk_busy_loop()'s loop condition, with seed 001's `nr_running_this_cpu() < 2`.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "reactor/policy/config.hh"

namespace affine::policy {

struct busy_poll_state {
  std::uint64_t elapsed_ns = 0;      // since this poll began
  std::uint32_t others_runnable = 0; // runnable fibers on this core besides the poller
  bool data_ready = false;           // the socket has data (or the poll found some)
  bool need_resched = false;         // the reactor wants the core back (quantum used)
  bool cpu_shared = false;           // another thread or process waits for this CPU (busy_poll.mode = "adaptive")
};

enum class poll_exit : std::uint8_t {
  polling,   // not an exit: keep polling
  off,       // busy polling is off (budget 0), or the reader has nothing it may poll
  data,      // data arrived
  runnable,  // another fiber is runnable on this core (seed 001)
  resched,   // the reactor asked for the core
  budget,    // the budget is spent
  shared,    // another thread or process waits for this CPU (seed 001's nr_running counts them)
  not_paying,  // adaptive: recent polls mostly outlasted what a sleep costs, so none (policy/spin.hh)
};
// Sizes the reactor's per-core counter arrays, indexed by the enum.
inline constexpr std::size_t poll_exit_count = static_cast<std::size_t>(poll_exit::not_paying) + 1;
std::string_view to_string(poll_exit e);

struct poll_decision {
  bool keep_polling;
  poll_exit reason;  // polling exactly when keep_polling
  friend bool operator==(const poll_decision&, const poll_decision&) = default;
};

// Called once per poll iteration. Pure: no clock (elapsed_ns is passed in).
poll_decision busy_poll_continue(const busy_poll_state& s, const policy_config& cfg) noexcept;

}  // namespace affine::policy
