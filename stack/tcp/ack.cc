// The ACK field (RFC 9293 3.10.7.4 fifth): send window, RTT (RFC 6298,
// RFC 7323 4), loss detection and NewReno recovery (RFC 5681, RFC 6582);
// with SACK, the scoreboard, RACK (rack.cc) and RFC 6675 recovery
// (sack_recovery.cc), and the undo of a spurious reduction (undo.cc).
// The congestion controller owns cwnd and ssthresh; this file decides when
// it is told what.

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

connection::step_result connection::check_ack(const tcp_segment& seg, std::uint64_t now_ns) {
  // "if the ACK bit is off, drop the segment and return".
  if (!seg.ack) return input_result{std::nullopt, drop_reason::no_ack};
  if (state_ == tcp_state::syn_received) {
    if (step_result stop = syn_received_ack(seg, now_ns)) return stop;
  }
  const seq32 ack = *seg.ack;
  // "If the ACK acks something not yet sent (SEG.ACK > SND.NXT), then send
  // an ACK, drop the segment, and return."
  if (ack > snd_max_) return input_result{ack_segment(now_ns), drop_reason::ack_of_unsent};
  // RFC 5961 5.2: acceptable only from SND.UNA - MAX.SND.WND on; an older
  // one (blind data injection with a guessed ACK) is dropped and answered.
  if (ack < snd_una_ - max_snd_wnd_) return input_result{challenge_ack(now_ns), drop_reason::ack_too_old};
  // RFC 5681 2 compares the window with the one before this segment.
  bool duplicate = is_duplicate_ack(seg);
  const seq32 una_before = snd_una_;
  const std::uint32_t sacked_before = sb_.sacked_bytes();
  scoreboard::update sacked;
  if (sack_ok_) {
    // RFC 6675 5 (1): the scoreboard first; with SACK, what counts as a
    // duplicate is an ACK that SACKs new data (sack_recovery.cc).
    sacked = take_sack(seg, seq_max(ack, snd_una_));
    duplicate = sack_duplicate(seg, sacked);
  }
  if (ecn_ok_ && seg.ece && ack >= snd_una_) ecn_echo_arrives(seg, now_ns);
  if (ack > snd_una_) {
    process_new_ack(seg, now_ns);
  } else if (duplicate) {
    process_duplicate_ack(now_ns);
  }
  if (sack_ok_) {
    rack_on_ack(seg, sacked, now_ns);  // RFC 8985 6.2 (may start recovery)
    if (dsack_spurious(sacked)) {
      undo_reduction(now_ns);
    } else {
      check_loss_probe(sacked, now_ns);  // RFC 8985 7.4
      // RFC 6937 3: DeliveredData = (change in snd.una) + (change in SACKed).
      if (in_recovery_) prr_on_ack(std::uint32_t(snd_una_ - una_before) + sb_.sacked_bytes() - sacked_before);
    }
  }
  // "If SND.UNA =< SEG.ACK =< SND.NXT, the send window should be updated";
  // an older ACK ("SEG.ACK < SND.UNA") is ignored.
  if (ack >= snd_una_) update_send_window(seg);
  switch (state_) {
    case tcp_state::fin_wait_1:
      // "if the FIN segment is now acknowledged, then enter FIN-WAIT-2".
      if (fin_acked()) {
        state_ = tcp_state::fin_wait_2;
        if (user_closed_) timers_.close = now_ns + cfg_.fin_wait_2_timeout_ns;
      }
      break;
    case tcp_state::closing:
      // "if the ACK acknowledges our FIN, then enter the TIME-WAIT state".
      if (fin_acked()) enter_time_wait(now_ns);
      break;
    case tcp_state::last_ack:
      // "If our FIN is now acknowledged, delete the TCB, enter the CLOSED
      // state, and return."
      if (fin_acked()) {
        enter_closed({}, end_reason::orderly);
        return input_result{};
      }
      break;
    default:
      break;
  }
  return std::nullopt;
}

// SND.UNA < SEG.ACK =< SND.NXT: "set SND.UNA <- SEG.ACK", and what follows.
void connection::process_new_ack(const tcp_segment& seg, std::uint64_t now_ns) {
  const seq32 ack = *seg.ack;
  // RFC 3522: this ACK may show the reduction was for nothing, before the
  // controller hears of it.
  if (eifel_spurious(seg)) undo_reduction(now_ns);
  const std::uint64_t rtt_ns = sample_rtt(seg, now_ns);
  // "Any segments on the retransmission queue that are thereby entirely
  // acknowledged are removed": the acknowledged bytes leave the send buffer
  // (the SYN and the FIN occupy sequence space but no buffer).
  std::uint32_t data_acked = 0;
  if (ack > snd_data_) {
    data_acked = std::min<std::uint32_t>(std::uint32_t(ack - snd_data_), std::uint32_t(snd_buf_.size()));
    snd_buf_.consume(data_acked);
    snd_data_ += data_acked;
    if (data_acked > 0) events_.add(event::writable);
  }
  const std::uint32_t flight = std::uint32_t(snd_max_ - snd_una_);
  snd_una_ = ack;
  unacked_since_ns_ = now_ns;  // what is still unacknowledged waits from here
  if (snd_nxt_ < snd_una_) snd_nxt_ = snd_una_;
  if (sack_ok_) sb_.advance(snd_una_);
  retransmissions_ = 0;
  dup_acks_ = 0;
  bool restart_timer = true;
  if (in_recovery_) {
    if (ack >= recover_) {
      // RFC 6582 3.2 step 6 / RFC 6675 5 (A): a full acknowledgment ends
      // recovery (RFC 6937: cwnd = ssthresh, which the exit gives a full flight).
      in_recovery_ = false;
      if (sack_ok_) {
        retransmit_head_ = false;
        rack_on_recovery_end();
      }
      if (recovery_resent_nothing()) {
        undo_reduction(now_ns);  // undo.cc: nothing was lost
      } else {
        end_undo_episode();
        cc_->on_exit_recovery(std::uint32_t(snd_max_ - snd_una_));
      }
    } else if (sack_ok_) {
      // RFC 6675: a partial ACK needs nothing of its own; the scoreboard
      // says what to send and the timer restarts (RFC 6298 5.3).
    } else {
      // RFC 6582 3.2 step 5: a partial acknowledgment: retransmit the first
      // unacknowledged segment, deflate cwnd, and reset the timer on the
      // first partial ACK only (the "Impatient" variant).
      cc_->on_partial_ack(data_acked);
      retransmit_head_ = true;
      count(&connection_stats::fast_retransmits);
      restart_timer = !partial_ack_seen_;
      partial_ack_seen_ = true;
    }
  } else if (data_acked > 0) {
    // A timeout's episode ends once what was out then is acknowledged.
    if (ack >= recover_) end_undo_episode();
    // RFC 3168 6.1.2: "SHOULD NOT increase the congestion window in
    // response to the receipt of an ECN-Echo ACK".
    if (!(ecn_ok_ && seg.ece)) cc_->on_ack({.bytes_acked = data_acked,
                 .flight_size = flight,
                 .now_ns = now_ns,
                 .rtt_ns = rtt_ns,
                 .srtt_ns = rto_.srtt_ns(),
                 .ack = ack,
                 .snd_max = snd_max_,
                 .cwnd_limited = cwnd_limited()});
  }
  // The marks the next reduction is judged by compare with SND.UNA modulo
  // 2^32 (RFC 9293 3.4). One that SND.UNA has passed must not stay where
  // it was: 2^31 bytes later it would read as ahead again, and for the
  // next 2^31 no duplicate ACK would start recovery (RFC 6582's and RFC
  // 6675's `recover`) and no echo would reduce (RFC 3168's once a window).
  // Linux keeps the same marks by state, which ends once they are passed.
  if (!in_recovery_ && snd_una_ > recover_) recover_ = snd_una_;
  if (ecn_reduced_ && snd_una_ > ecn_high_) ecn_reduced_ = false;
  // RFC 6298 5.2: all outstanding data acknowledged: stop the timer;
  // 5.3: otherwise restart it.
  if (snd_una_ == snd_max_) {
    timers_.retransmit = no_deadline;
  } else if (restart_timer) {
    restart_retransmit_timer(now_ns);
  }
  // RFC 8985 7.2: an ACK of new data starts the probe timer again.
  arm_loss_probe(now_ns);
}

// RFC 5681 2, DUPLICATE ACKNOWLEDGMENT: (a) data outstanding, (b) no data,
// (c) SYN and FIN off, (d) SEG.ACK == SND.UNA, (e) the window unchanged.
// A zero-window probe's byte is not outstanding (SND.NXT does not move).
bool connection::is_duplicate_ack(const tcp_segment& seg) const {
  return snd_nxt_ != snd_una_ && seg.payload.empty() && seg.control == tcp_control::none && *seg.ack == snd_una_ &&
         (std::uint32_t(seg.window) << snd_wscale_) == snd_wnd_;
}

void connection::process_duplicate_ack(std::uint64_t now_ns) {
  count(&connection_stats::duplicate_acks);
  ++dup_acks_;
  if (in_recovery_) {
    // RFC 6582 3.2 step 4: inflate; output() sends new data if cwnd allows.
    // With SACK, PRR paces recovery instead (prr_on_ack).
    if (!sack_ok_) cc_->on_dup_ack_in_recovery();
    return;
  }
  // RFC 6582 3.2 step 2 / RFC 6675 5 (4): only if the cumulative ACK covers
  // more than `recover` (one past the highest sequence number sent when the
  // last recovery or timeout began), so one loss is not reduced for twice.
  if (snd_una_ < recover_) return;
  // With SACK, RACK decides what is lost and starts recovery (rack.cc).
  if (sack_ok_) return;
  // RFC 5681 3.2 step 2: the third duplicate ACK.
  if (dup_acks_ != 3) return;
  in_recovery_ = true;
  partial_ack_seen_ = false;
  recover_ = snd_max_;
  open_undo_episode(false);  // undo.cc: Eifel judges it, as with SACK
  cc_->on_enter_recovery(std::uint32_t(snd_max_ - snd_una_), now_ns);
  // RFC 5681 3.2 step 3 / RFC 6582 3.2 step 3: retransmit the lost segment.
  retransmit_head_ = true;
  count(&connection_stats::fast_retransmits);
}

// RFC 9293 3.10.7.4 fifth: "If SND.WL1 < SEG.SEQ or (SND.WL1 = SEG.SEQ and
// SND.WL2 =< SEG.ACK), set SND.WND <- SEG.WND, set SND.WL1 <- SEG.SEQ, and
// set SND.WL2 <- SEG.ACK" (RFC 7323 2.3: SEG.WND is scaled).
void connection::update_send_window(const tcp_segment& seg) {
  if (!(snd_wl1_ < seg.seq || (snd_wl1_ == seg.seq && snd_wl2_ <= *seg.ack))) return;
  snd_wnd_ = std::uint32_t(seg.window) << snd_wscale_;
  snd_wl1_ = seg.seq;
  snd_wl2_ = *seg.ack;
  max_snd_wnd_ = std::max(max_snd_wnd_, snd_wnd_);
  if (snd_wnd_ > 0) {
    // The window opened: output() sends; it arms the timer again if the
    // window is still too small to use.
    timers_.persist = no_deadline;
    persist_backoff_ = 0;
    orphan_probes_ = 0;
    window_shut_ns_ = no_deadline;
  }
}

std::uint64_t connection::sample_rtt(const tcp_segment& seg, std::uint64_t now_ns) {
  if (ts_ok_) {
    // RFC 7323 4.1: RTT = now - TSecr on an ACK of new data; TSecr echoes the
    // segment that caused the ACK, so retransmissions are unambiguous. A zero
    // TSecr is what a peer sends that has no timestamp to echo (Linux).
    // An echo from the future is bogus and gives no sample.
    const auto& ts = seg.options.timestamps;
    if (!ts || ts->echo == 0) return 0;
    const auto ticks = std::int32_t(ts_clock(now_ns) - ts->echo);
    if (ticks < 0) return 0;
    const std::uint64_t rtt = std::uint64_t(ticks) * ts_tick_ns;
    rto_.sample(rtt);
    return std::max<std::uint64_t>(rtt, 1);  // under a tick is still a sample; 0 means none
  }
  // RFC 6298 3 (Karn): only the timed segment, never a retransmitted one.
  if (!rtt_seq_ || *seg.ack <= *rtt_seq_) return 0;
  const std::uint64_t rtt = now_ns - rtt_start_ns_;
  rto_.sample(rtt);
  rtt_seq_.reset();
  return std::max<std::uint64_t>(rtt, 1);
}

}  // namespace affine::stack::tcp
