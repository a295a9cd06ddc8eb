// busy_poll_continue(): the exits of sk_busy_loop(), in the order a user
// reading the counters would want them attributed.

#include "reactor/policy/busy_poll.hh"

namespace affine::policy {

std::string_view to_string(poll_exit e) {
  switch (e) {
    case poll_exit::polling: return "polling";
    case poll_exit::off: return "off";
    case poll_exit::data: return "data";
    case poll_exit::runnable: return "runnable";
    case poll_exit::resched: return "resched";
    case poll_exit::budget: return "budget";
    case poll_exit::shared: return "shared";
    case poll_exit::not_paying: return "not_paying";
  }
  return "unknown";
}

poll_decision busy_poll_continue(const busy_poll_state& s, const policy_config& cfg) noexcept {
  // busy_poll.budget_us = 0 turns busy polling off, like busy_read = 0.
  if (cfg.busy_poll_budget_ns == 0) return {false, poll_exit::off};
  // Kernel: skb_queue_empty(&sk->sk_receive_queue) ends the loop.
  if (s.data_ready) return {false, poll_exit::data};
  // seed 001: `nr_running_this_cpu() < 2`: the poller is one, so any other
  // runnable fiber ends the spin; it may be about to send what we wait for.
  if (cfg.yield_when_runnable && s.others_runnable > 0) return {false, poll_exit::runnable};
  // The same rule for tasks outside the runtime: the kernel's nr_running
  // counts other processes, and so does an adaptive poll.
  if (cfg.busy_poll_adaptive && s.cpu_shared) return {false, poll_exit::shared};
  // Kernel: !need_resched().
  if (s.need_resched) return {false, poll_exit::resched};
  // Kernel: !busy_loop_timeout(end_time).
  if (s.elapsed_ns >= cfg.busy_poll_budget_ns) return {false, poll_exit::budget};
  return {true, poll_exit::polling};
}

}  // namespace affine::policy
