// The tail loss probe (RFC 8985 7): when the last segments of a flight are
// lost no duplicate ACK comes to start recovery, and the sender would wait
// for the RTO. After two round trips of silence it sends one probe instead
// (new data if it may, else the last segment again); the ACK that answers
// it lets RACK find what is still missing (rack.cc), or shows that the
// probe itself repaired the loss. Needs SACK, as RFC 8985 does.

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

namespace {

// RFC 8985 7.2: WCDelAckT, the worst-case delayed-ACK timer a single
// outstanding segment may wait for at the receiver.
constexpr std::uint64_t worst_case_delayed_ack_ns = 200'000'000;
// A floor under 2 * SRTT, as Linux has (TCP_TIMEOUT_MIN): on a LAN SRTT is
// microseconds and timestamps tick in milliseconds.
constexpr std::uint64_t min_probe_timeout_ns = 2'000'000;

}  // namespace

// RFC 8985 7.2: not in recovery or after a timeout, not while SACKed data
// already drives loss detection, and one probe at a time.
bool connection::loss_probe_allowed() const {
  const bool may_send = state_ == tcp_state::established || state_ == tcp_state::fin_wait_1 ||
                        state_ == tcp_state::close_wait || state_ == tcp_state::closing ||
                        state_ == tcp_state::last_ack;
  return sack_ok_ && may_send && snd_max_ != snd_una_ && !in_recovery_ && retransmissions_ == 0 &&
         sb_.empty() && !loss_probe_end_;
}

// RFC 8985 7.2: PTO = 2 * SRTT, plus WCDelAckT when one segment is
// outstanding; 1 s without an RTT sample. A PTO at or after the RTO is no
// use: the timer's retransmission goes then anyway.
void connection::arm_loss_probe(std::uint64_t now_ns) {
  timers_.loss_probe = no_deadline;
  if (!loss_probe_allowed()) return;
  std::uint64_t pto = rto_.has_sample() ? std::max(2 * rto_.srtt_ns(), min_probe_timeout_ns) : 1'000'000'000;
  if (std::uint32_t(snd_max_ - snd_una_) <= eff_mss_) pto += worst_case_delayed_ack_ns;
  if (now_ns + pto < timers_.retransmit) timers_.loss_probe = now_ns + pto;
}

// RFC 8985 7.3: a previously unsent segment if the peer's window allows,
// else the last segment sent; then the RTO is armed again, not the PTO.
void connection::output_loss_probe(std::uint64_t now_ns, segment_sink sink) {
  loss_probe_due_ = false;
  if (!loss_probe_allowed()) return;
  const seq32 end = fin_seq();
  const std::uint32_t queued = snd_nxt_ < end ? std::uint32_t(end - snd_nxt_) : 0;
  const seq32 edge = snd_una_ + snd_wnd_;
  const std::uint32_t room = snd_nxt_ < edge ? std::uint32_t(edge - snd_nxt_) : 0;
  const std::uint32_t fresh = std::min({eff_mss_, queued, room});
  if (snd_nxt_ == snd_max_ && fresh > 0) {
    const bool fin = fin_queued_ && fresh == queued;
    loss_probe_begin_ = snd_nxt_;
    send_data_segment(snd_nxt_, fresh, fin, now_ns, sink);
    snd_nxt_ += fresh + (fin ? 1 : 0);
    snd_max_ = seq_max(snd_max_, snd_nxt_);
    loss_probe_retransmitted_ = false;
  } else {
    // The highest-sequence segment again (with the FIN if that went).
    const seq32 data_end = seq_max(end < snd_max_ ? end : snd_max_, snd_una_);
    const std::uint32_t len = std::min(eff_mss_, std::uint32_t(data_end - snd_una_));
    const seq32 from = data_end - len;
    const bool fin = fin_queued_ && snd_max_ > end;
    if (len == 0 && !fin) return;
    loss_probe_begin_ = from;
    send_data_segment(from, len, fin, now_ns, sink);
    loss_probe_retransmitted_ = true;
  }
  loss_probe_end_ = snd_max_;
  count(&connection_stats::loss_probes);
  restart_retransmit_timer(now_ns);
}

// RFC 8985 7.4, on every ACK while a probe is out.
void connection::check_loss_probe(const scoreboard::update& u, std::uint64_t now_ns) {
  if (!loss_probe_end_) return;
  if (in_recovery_) {
    loss_probe_end_.reset();  // recovery took over and made the reduction
    return;
  }
  if (loss_probe_retransmitted_ && u.dsack) {
    // The original arrived too: the probe was not needed, nothing was lost.
    loss_probe_end_.reset();
    return;
  }
  if (snd_una_ >= *loss_probe_end_) {
    // Everything up to the probe acknowledged. A retransmitted probe that
    // drew no D-SACK repaired a loss: the congestion response of one.
    if (loss_probe_retransmitted_) {
      count(&connection_stats::loss_probe_repairs);
      const auto flight = std::uint32_t(snd_max_ - snd_una_);
      cc_->on_enter_recovery(flight + eff_mss_, now_ns);
      cc_->on_exit_recovery(flight);
    }
    loss_probe_end_.reset();
    return;
  }
  // A probe SACKed while earlier data is still missing is RACK's to take:
  // what was sent a PTO before it is lost, and recovery starts (rack.cc).
}

}  // namespace affine::stack::tcp
