// Bounded busy polling (seed 001, DESIGN.md section 1 P2): the reader polls
// its flow's RX queues itself, under each queue's owner try-lock (the NAPI
// ownership analogue: the owning reactor skips a queue a fiber holds), and
// runs stack input in its own context. The loop condition is the pure
// policy::busy_poll_continue, which gives the core up as soon as another
// fiber is runnable on it when yield_when_runnable is set. In the adaptive
// mode (busy_poll.mode) the budget is a bound: a poll lasts only as long as
// polls on this core have been paying (policy/spin.hh), and none starts or
// goes on while another thread or process waits for the CPU.
//
// The core's TX batch is flushed before each poll: a reader that polls for
// the answer to what it just wrote must not keep its own request in the
// batch (the reactor's flush rung does not run while it polls). Without it,
// two peers that both poll wait out each other's budget.

#include <rte_mbuf.h>

#include <array>
#include <mutex>

#include "reactor/here.hh"
#include "stack/per_core.hh"
#include "stack/stack.hh"

namespace affine::stack {

policy::poll_exit stack::busy_poll(tcp_socket& s) {
  const unsigned core = detail::here::core();
  policy::policy_config cfg = detail::here::policy();
  cfg.busy_poll_budget_ns = busy_poll_budget_ns(s);
  per_core& pc = *cores_[core];
  const int rx = s.rx_core.load(std::memory_order_relaxed);
  const bool known = rx >= 0 && unsigned(rx) < cores_.size();
  // Where RPS hands this flow to the reader's own core, the packets come
  // through that core's backlog ring: the reader drains it (it is on that
  // core, so it is the ring's one consumer). A flow whose packets reach
  // another core's backlog leaves nothing here to poll.
  const bool backlog = known && rps_ && unsigned(rx) == core;
  if (!known || (attachment_->poller(unsigned(rx)).queues().empty() && !backlog)) {
    bump(pc.counters.busy_poll_exits[std::size_t(policy::poll_exit::off)]);
    return policy::poll_exit::off;
  }
  // One clock read a turn, at its start, off the path from a packet's
  // arrival to the reader: the stack takes it as the packets' time, and
  // data ends a poll before the budget is looked at.
  const std::uint64_t start = now_ns();
  std::uint64_t now = start;
  if (cfg.busy_poll_adaptive) {
    const policy::spin_plan plan = detail::here::plan_busy_poll(cfg.busy_poll_budget_ns, start);
    if (plan.window_ns == 0) {
      const auto why = plan.reason == policy::spin_reason::shared ? policy::poll_exit::shared
                       : plan.reason == policy::spin_reason::off  ? policy::poll_exit::off
                                                                  : policy::poll_exit::not_paying;
      bump(pc.counters.busy_poll_exits[std::size_t(why)]);
      return why;
    }
    cfg.busy_poll_budget_ns = plan.window_ns;
  }
  std::array<rte_mbuf*, drivers::rx_poller::burst> pkts;
  for (;; now = now_ns()) {
    pc.tx.flush();
    if (backlog) bump(pc.counters.busy_poll_packets, rps_->drain(pc.index));
    for (unsigned q : attachment_->poller(unsigned(rx)).queues()) {
      drivers::rx_queue_owner& owner = port_.owner(q);
      if (!owner.try_lock()) continue;  // its reactor (or another poller) is on it
      const std::uint16_t n = port_.rx_burst(q, pkts.data(), std::uint16_t(pkts.size()));
      owner.unlock();
      if (n == 0) continue;
      bump(pc.counters.busy_poll_packets, n);
      process(pc.index, std::span(pkts.data(), n), int(q), now);  // a busy poller is no RPS hop
    }
    policy::busy_poll_state st;
    st.elapsed_ns = now - start;
    st.others_runnable = detail::here::others_runnable();
    st.cpu_shared = cfg.busy_poll_adaptive && detail::here::cpu_shared(now);
    {
      std::lock_guard g(s.lock);
      st.data_ready = s.conn.readable() > 0 || s.conn.eof() || s.conn.state() == tcp::tcp_state::closed;
    }
    const policy::poll_decision d = policy::busy_poll_continue(st, cfg);
    if (!d.keep_polling) {
      bump(pc.counters.busy_poll_exits[std::size_t(d.reason)]);
      // What the wait was, where the poll saw it end or outlast its window;
      // one cut short for another task says nothing about it.
      if (cfg.busy_poll_adaptive && (d.reason == policy::poll_exit::data || d.reason == policy::poll_exit::budget))
        detail::here::record_busy_poll(d.reason == policy::poll_exit::budget ? ~0ULL : st.elapsed_ns);
      return d.reason;
    }
  }
}

// Precondition: on a reactor (the runtime's policy is the core's).
std::uint64_t stack::busy_poll_budget_ns(const tcp_socket& s) const {
  const int q = s.rx_queue.load(std::memory_order_relaxed);
  if (q >= 0 && std::size_t(q) < cfg_.busy_poll_budget_us.size() && cfg_.busy_poll_budget_us[std::size_t(q)] >= 0)
    return std::uint64_t(cfg_.busy_poll_budget_us[std::size_t(q)]) * 1000;
  return detail::here::policy().busy_poll_budget_ns;
}

}  // namespace affine::stack
