// Timers (the integration arms one per connection at next_deadline()):
// retransmission (RFC 6298, RFC 1122 4.2.3.5), persist (RFC 9293 3.8.6.1),
// delayed ACK (RFC 1122 4.2.3.2), keepalive (RFC 1122 4.2.3.6), TIME-WAIT
// (RFC 9293 3.3.2), the FIN-WAIT-2 timeout and linger.

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

std::uint64_t connection::next_deadline() const {
  return std::min({timers_.retransmit, timers_.persist, timers_.delayed_ack, timers_.keepalive, timers_.close,
                   timers_.linger, timers_.loss_probe, timers_.reorder, timers_.pace});
}

void connection::on_timer(std::uint64_t now_ns) {
  now_ns = monotone_now(now_ns);
  if (timers_.linger <= now_ns) {
    // SO_LINGER: not finished in time after close(): reset.
    abort_with(end_reason::linger);
    return;
  }
  if (timers_.close <= now_ns) {
    // TIME-WAIT's 2 MSL, or FIN-WAIT-2 after close(): the connection ends.
    enter_closed({}, state_ == tcp_state::time_wait ? end_reason::orderly : end_reason::fin_wait_2);
    return;
  }
  if (timers_.retransmit <= now_ns) {
    timers_.retransmit = no_deadline;
    on_retransmit_timeout(now_ns);
    if (state_ == tcp_state::closed) return;
  }
  if (timers_.reorder <= now_ns) {
    timers_.reorder = no_deadline;
    on_reorder_timeout(now_ns);
  }
  if (timers_.loss_probe <= now_ns) {
    timers_.loss_probe = no_deadline;
    loss_probe_due_ = true;  // output() sends it
  }
  if (timers_.persist <= now_ns) {
    timers_.persist = no_deadline;
    on_persist_timeout(now_ns);
    if (state_ == tcp_state::closed) return;
  }
  if (timers_.keepalive <= now_ns) {
    timers_.keepalive = no_deadline;
    on_keepalive_timeout(now_ns);
    if (state_ == tcp_state::closed) return;
  }
  if (timers_.delayed_ack <= now_ns) {
    timers_.delayed_ack = no_deadline;
    ack_now_ = true;
  }
  if (timers_.pace <= now_ns) timers_.pace = no_deadline;  // output() sends what the rate now lets go
}

void connection::on_retransmit_timeout(std::uint64_t now_ns) {
  count(&connection_stats::retransmission_timeouts);
  if (const end_reason why = retransmissions_end(now_ns); why != end_reason::open) {
    // RFC 1122 4.2.3.5: R2 reached, give up. A passive handshake that never
    // completed ends quietly: no application knows of it. The error is
    // the last soft one an ICMP message gave (RFC 1122 4.2.3.9: host
    // unreachable, say), else ETIMEDOUT, as Linux reports it.
    const bool quiet = passive_ && state_ == tcp_state::syn_received;
    enter_closed(quiet         ? std::error_code{}
                 : soft_error_ ? soft_error_
                               : std::make_error_code(std::errc::timed_out),
                 quiet ? end_reason::handshake_failed : why);
    return;
  }
  ++retransmissions_;
  // RFC 6298 5.5: back off; 3 (Karn): the timed segment gives no sample now.
  rto_.backoff();
  rtt_seq_.reset();
  if (!syn_acked()) {
    // The SYN (or SYN,ACK) goes out again.
    snd_nxt_ = iss_;
    syn_retransmitted_ = true;
  } else {
    // RFC 5681 3.1: ssthresh from the flight, cwnd = 1 MSS; RFC 6582 4:
    // recover = the highest sequence number sent, and recovery ends;
    // RFC 6298 5.4: retransmit from SND.UNA (output() resends in order).
    open_undo_episode(true);
    cc_->on_timeout(std::uint32_t(snd_max_ - snd_una_));
    // RFC 2018 8: the receiver may have dropped what it SACKed (reneging):
    // the scoreboard starts again, and nothing counts as delivered or lost.
    sb_.clear();
    rack_on_timeout();
    // RFC 8985 7: the timer did what a probe would have; none is out.
    loss_probe_end_.reset();
    timers_.loss_probe = no_deadline;
    loss_probe_due_ = false;
    in_recovery_ = false;
    retransmit_head_ = false;
    dup_acks_ = 0;
    recover_ = snd_max_;
    snd_nxt_ = snd_una_;
  }
  // RFC 6298 5.6: start the timer with the new RTO.
  restart_retransmit_timer(now_ns);
}

void connection::end_time_wait() {
  if (state_ == tcp_state::time_wait) enter_closed({}, end_reason::orderly);
}

// Whether a retransmission timeout ends the connection, and why (`open`:
// it does not): RFC 1122 4.2.3.5's R2 reached, or with a user timeout
// (RFC 9293 3.10.8), the oldest unacknowledged data has waited that long.
// As Linux does, the user timeout takes R2's place for data; a handshake
// ends at either.
end_reason connection::retransmissions_end(std::uint64_t now_ns) const {
  const bool handshake = state_ == tcp_state::syn_sent || state_ == tcp_state::syn_received;
  const unsigned limit = state_ == tcp_state::syn_sent       ? cfg_.max_syn_retransmissions
                         : state_ == tcp_state::syn_received ? cfg_.max_synack_retransmissions
                                                             : cfg_.max_retransmissions;
  if (cfg_.user_timeout_ns == 0 || (handshake && retransmissions_ >= limit))
    return retransmissions_ >= limit ? end_reason::retransmissions : end_reason::open;
  return now_ns - unacked_since_ns_ >= cfg_.user_timeout_ns ? end_reason::user_timeout : end_reason::open;
}

void connection::on_persist_timeout(std::uint64_t now_ns) {
  // RFC 1122 4.2.2.17: never give up while the peer answers the probes;
  // give up when it stops answering. With a user timeout (RFC 9293
  // 3.10.8), queued data that has waited that long before the shut window
  // ends the connection, answered or not (Linux's tcp_probe_timer).
  const bool user_timeout = cfg_.user_timeout_ns != 0 && now_ns - window_shut_ns_ >= cfg_.user_timeout_ns;
  if (++persist_unanswered_ > cfg_.max_retransmissions || user_timeout) {
    enter_closed(std::make_error_code(std::errc::timed_out), user_timeout ? end_reason::user_timeout : end_reason::persist);
    return;
  }
  // But an orphan has no application to wait for: it gives up after
  // max_orphan_probes, answered or not, and resets the peer (Linux's
  // tcp_probe_timer for a dead socket).
  if (user_closed_ && ++orphan_probes_ > cfg_.max_orphan_probes) {
    count(&connection_stats::orphans_reset);
    rst_pending_ = true;
    enter_closed(std::make_error_code(std::errc::timed_out), end_reason::orphan_probes);
    return;
  }
  persist_probe_due_ = true;
}

void connection::on_keepalive_timeout(std::uint64_t now_ns) {
  if (!keepalive_applies()) return;
  if (snd_max_ != snd_una_ || !snd_buf_.empty()) {
    // Data is outstanding: the retransmission timer watches the peer.
    timers_.keepalive = now_ns + cfg_.keepalive.idle_ns;
    return;
  }
  // RFC 1122 4.2.3.6: the peer is gone after `count` unanswered probes,
  // or with a user timeout, once a probe went out and nothing came for
  // that long (Linux's tcp_keepalive_timer). Reset, as Linux does.
  const bool gone = cfg_.user_timeout_ns != 0
                        ? keepalive_probes_ > 0 && now_ns - last_rx_ns_ >= cfg_.user_timeout_ns
                        : keepalive_probes_ >= cfg_.keepalive.count;
  if (gone) {
    rst_pending_ = true;
    enter_closed(std::make_error_code(std::errc::timed_out),
                 cfg_.user_timeout_ns != 0 ? end_reason::user_timeout : end_reason::keepalive);
    return;
  }
  ++keepalive_probes_;
  keepalive_probe_due_ = true;
  timers_.keepalive = now_ns + cfg_.keepalive.interval_ns;
}

bool connection::keepalive_applies() const {
  return cfg_.keepalive.enabled && (state_ == tcp_state::established || state_ == tcp_state::close_wait);
}

// RFC 9293 3.10.8: a user timeout expires on time, not at the next
// backed-off timeout after it (Linux's tcp_clamp_rto_to_user_timeout).
std::uint64_t connection::within_user_timeout(std::uint64_t deadline, std::uint64_t since_ns) const {
  if (cfg_.user_timeout_ns == 0) return deadline;
  return std::min(deadline, since_ns + cfg_.user_timeout_ns);
}

void connection::restart_retransmit_timer(std::uint64_t now_ns) {
  timers_.retransmit = within_user_timeout(now_ns + rto_.rto_ns(), unacked_since_ns_);
}

// RFC 6298 5.1: the timer starts when data leaves and it is not running;
// the oldest unacknowledged data starts to wait then.
void connection::start_retransmit_timer(std::uint64_t now_ns) {
  if (timers_.retransmit != no_deadline) return;
  unacked_since_ns_ = now_ns;
  restart_retransmit_timer(now_ns);
}

// RFC 9293 3.8.6.1: the first probe after one RTO, then exponentially
// further apart, bounded by the RTO's maximum.
void connection::arm_persist(std::uint64_t now_ns) {
  const std::uint64_t max = cfg_.rto.max_ns;
  std::uint64_t interval = rto_.rto_ns();
  for (unsigned i = 0; i < persist_backoff_ && interval < max; ++i) interval *= 2;
  if (window_shut_ns_ == no_deadline) window_shut_ns_ = now_ns;
  timers_.persist = within_user_timeout(now_ns + std::min(interval, max), window_shut_ns_);
}

// RFC 1122 4.2.3.6: the first probe after `idle` without a segment received.
void connection::arm_keepalive() {
  timers_.keepalive = keepalive_applies() ? last_rx_ns_ + cfg_.keepalive.idle_ns : no_deadline;
}

void connection::set_keepalive(const keepalive_config& k) {
  cfg_.keepalive = k;
  keepalive_probes_ = 0;
  arm_keepalive();
}

}  // namespace affine::stack::tcp
