// Spurious retransmissions, and undoing the reduction they caused. A
// reduction (a fast recovery, with SACK or without (RFC 6582), or a
// retransmission timeout) opens an episode at SND.UNA, keeping the window
// from before it; the episode counts the data segments it resends. It was
// spurious when:
//   - Eifel (RFC 3522, RFC 4015 for the timeout): the first ACK past the
//     episode's start echoes a timestamp older than the first
//     retransmission, so the original arrived; or
//   - D-SACK (RFC 2883, Linux's undo_retrans): every retransmission of the
//     episode is reported as a duplicate. Such reports come up to a round
//     trip after the retransmission, so the episode outlives its recovery
//     by one window.
//   - a recovery ends having resent nothing: what filled every hole was
//     the original.
// Then the congestion controller takes back its window (cwnd and ssthresh
// as before the reduction), what was marked lost is not, the reordering
// that fooled loss detection counts as seen (RACK widens its window), and
// after a timeout sending goes on with new data, not the go-back-N resend
// (RFC 4015 2).

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

void connection::open_undo_episode(bool timeout) {
  if (undo_.open && !undo_.ended) {
    undo_.timeout = undo_.timeout || timeout;  // a timeout during recovery: the same episode
    return;
  }
  undo_ = undo_episode{.open = true,
                       .timeout = timeout,
                       .marker = snd_una_,
                       .prior_cwnd = cc_->cwnd(),
                       .prior_ssthresh = cc_->ssthresh(),
                       .probe_resent = loss_probe_end_.has_value() && loss_probe_retransmitted_};
}

// Recovery is over, or what a timeout had out is acknowledged: late
// reports may still come for one more window.
void connection::end_undo_episode() {
  if (!undo_.open || undo_.ended) return;
  undo_.ended = true;
  undo_.eifel_armed = false;
  undo_.close_at = snd_max_;
}

// Every retransmission of data while an episode runs.
void connection::note_episode_retransmission(std::uint64_t now_ns) {
  if (!undo_.open || undo_.ended) return;
  if (undo_.retransmissions++ == 0 && ts_ok_) {
    undo_.first_rexmit_ts = ts_clock(now_ns);
    undo_.eifel_armed = true;
  }
}

// Recovery is over, RecoveryPoint acknowledged, and no retransmission went
// out: the network reordered or delayed, it lost nothing. The RX path takes
// a flow's burst before its output runs (stack/rx_tcp_demux.cc), so the
// ACK that shows a hole and the one that shows it filled can come together,
// and output finds nothing lost to resend. A retransmitted loss probe out
// when recovery began may be what filled it (RFC 8985 7.4.2): then the
// reduction stands.
bool connection::recovery_resent_nothing() const {
  return undo_.open && !undo_.ended && !undo_.timeout && !undo_.probe_resent && undo_.retransmissions == 0;
}

// RFC 3522 2: on the first ACK that acknowledges the first
// retransmission's data, before anything else takes that ACK.
bool connection::eifel_spurious(const tcp_segment& seg) {
  if (undo_.open && undo_.ended && *seg.ack >= undo_.close_at) undo_ = undo_episode{};
  if (!undo_.open || !undo_.eifel_armed || !(undo_.marker < *seg.ack)) return false;
  undo_.eifel_armed = false;
  const auto& ts = seg.options.timestamps;
  return ts && ts->echo != 0 && std::int32_t(ts->echo - undo_.first_rexmit_ts) < 0;
}

// RFC 2883: a duplicate of data the episode resent is one retransmission
// fewer that was needed.
bool connection::dsack_spurious(const scoreboard::update& u) {
  if (!undo_.open || !u.dsack || undo_.retransmissions == 0) return false;
  if (u.dsack_range.begin < undo_.marker) return false;
  const std::uint32_t len = std::uint32_t(u.dsack_range.end - u.dsack_range.begin);
  undo_.dsacked += std::max<unsigned>(1, (len + eff_mss_ - 1) / eff_mss_);
  return undo_.dsacked >= undo_.retransmissions;
}

void connection::undo_reduction(std::uint64_t now_ns) {
  count(&connection_stats::spurious_undos);
  cc_->on_undo(undo_.prior_cwnd, undo_.prior_ssthresh);
  in_recovery_ = false;
  sndcnt_ = 0;
  // A later loss in this window may start recovery of its own.
  recover_ = snd_una_;
  forget_lost_marks();
  if (!rack_.reord) count(&connection_stats::reordering_seen);
  rack_.reord = true;
  if (undo_.timeout) {
    // RFC 4015 2: the timeout was spurious: on with new data, not the
    // go-back-N resend, and the timer from the estimate again.
    snd_nxt_ = snd_max_;
    retransmissions_ = 0;
    rto_.reset_backoff();
    if (snd_una_ != snd_max_) restart_retransmit_timer(now_ns);
  }
  undo_ = undo_episode{};
}

}  // namespace affine::stack::tcp
