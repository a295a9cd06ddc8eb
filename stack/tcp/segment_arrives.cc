// SEGMENT ARRIVES (RFC 9293 3.10.7): one dispatch, one function per step.

#include <algorithm>

#include "stack/tcp/challenge_budget.hh"
#include "stack/tcp/connection.hh"
#include "stack/tcp/reset.hh"

namespace affine::stack::tcp {

connection::input_result connection::input(const tcp_segment& seg, std::uint64_t now_ns) {
  now_ns = monotone_now(now_ns);
  switch (state_) {
    case tcp_state::closed:
    case tcp_state::listen:
      // RFC 9293 3.10.7.1: as if no connection existed.
      return {reset_for(seg), drop_reason::closed};
    case tcp_state::syn_sent:
      return syn_sent_arrives(seg, now_ns);
    default:
      return segment_arrives(seg, now_ns);
  }
}

// RFC 9293 3.10.7.4, "Otherwise" (SYN-RECEIVED and the synchronized states).
connection::input_result connection::segment_arrives(const tcp_segment& seg, std::uint64_t now_ns) {
  incoming in{seg.seq, seg.control == tcp_control::syn, seg.control == tcp_control::fin, seg.payload};
  step_result stop;
  // RFC 7323 3.2 and 5.3 R1: timestamps, and PAWS before the window test.
  if ((stop = check_timestamps(seg, now_ns))) return *stop;
  if ((stop = check_duplicate_syn(seg, in))) return *stop;
  // First: the sequence number.
  if ((stop = check_sequence(seg, in, now_ns))) return *stop;
  update_ts_recent(seg, now_ns);
  last_rx_ns_ = now_ns;
  keepalive_probes_ = 0;
  persist_unanswered_ = 0;
  arm_keepalive();
  // Second: RST. (Third, security, has nothing to check.)
  if ((stop = check_rst(seg, now_ns))) return *stop;
  // Fourth: SYN.
  if ((stop = check_syn(in, now_ns))) return *stop;
  // Fifth: ACK.
  if ((stop = check_ack(seg, now_ns))) return *stop;
  // RFC 3168 6.1.3: the ECN field and CWR of an acceptable segment.
  ecn_arrives(seg);
  // Sixth: URG is ignored (RFC 6093: the urgent pointer carries no meaning here).
  // Seventh: the segment text.
  if ((stop = process_data(seg, in, now_ns))) return *stop;
  // Eighth: FIN.
  process_fin(in, now_ns);
  return {};
}

// SYN-RECEIVED only: a segment carrying the SYN we already have.
connection::step_result connection::check_duplicate_syn(const tcp_segment& seg, incoming& in) {
  if (state_ != tcp_state::syn_received || seg.control != tcp_control::syn || seg.seq != irs_) return std::nullopt;
  if (seg.ack) {
    // RFC 9293 3.5 Figure 7 line 6: in a simultaneous open the peer's
    // SYN,ACK repeats its SYN; its ACK may complete our handshake, so the
    // SYN is stepped over instead of failing the window test.
    in.seq = seg.seq + 1;
    in.syn = false;
    return std::nullopt;
  }
  // The peer sent its SYN again: our SYN,ACK was lost. Send it again now
  // (Linux tcp_check_req) rather than waiting for our timer.
  snd_nxt_ = iss_;
  rtt_seq_.reset();
  return input_result{};
}

std::uint32_t connection::receive_window() const {
  return rcv_adv_ > rcv_nxt_ ? std::uint32_t(rcv_adv_ - rcv_nxt_) : 0;
}

// RFC 9293 3.10.7.4 first, the four cases of the acceptability test.
bool connection::acceptable(const incoming& in) const {
  const std::uint32_t len = std::uint32_t(in.data.size()) + (in.syn ? 1 : 0) + (in.fin ? 1 : 0);
  const std::uint32_t wnd = receive_window();
  const seq32 right = rcv_nxt_ + wnd;
  if (len == 0) return wnd == 0 ? in.seq == rcv_nxt_ : seq_in_window(in.seq, rcv_nxt_, right);
  if (wnd == 0) return false;
  return seq_in_window(in.seq, rcv_nxt_, right) || seq_in_window(in.seq + (len - 1), rcv_nxt_, right);
}

// RFC 9293 3.10.7.4 first: keep only what lies in the window. Bytes before
// RCV.NXT were received already; bytes past the right edge are cut. A FIN
// needs no window of its own, but is cut with the data before it.
void connection::trim_to_window(incoming& in) const {
  if (in.seq < rcv_nxt_) {
    std::uint32_t skip = std::uint32_t(rcv_nxt_ - in.seq);
    if (in.syn) {
      in.syn = false;
      in.seq += 1;
      --skip;
    }
    const std::size_t d = std::min<std::size_t>(skip, in.data.size());
    in.data = in.data.subspan(d);
    in.seq += std::uint32_t(d);
  }
  const std::uint32_t room = receive_window() - std::min(receive_window(), std::uint32_t(in.seq - rcv_nxt_));
  if (in.data.size() > room) {
    in.data = in.data.first(room);
    in.fin = false;
  }
}

connection::step_result connection::check_sequence(const tcp_segment& seg, incoming& in, std::uint64_t now_ns) {
  // RFC 2883 4.1.1: bytes before RCV.NXT came twice: a segment all before
  // it (a retransmission whose ACK was lost, or one resent too soon), or
  // the old part of one that reaches past it. Reported whether the rest is
  // acceptable or not; never for a RST, which is dropped unanswered.
  const seq32 text = in.seq + (in.syn ? 1 : 0);
  if (!in.data.empty() && text < rcv_nxt_ && seg.control != tcp_control::rst)
    note_duplicate(text, seq_min(rcv_nxt_, text + std::uint32_t(in.data.size())));
  if (acceptable(in)) {
    trim_to_window(in);
    return std::nullopt;
  }
  if (receive_window() == 0 && in.seq == rcv_nxt_) {
    // RFC 9293 3.10.7.4 first: with a zero window "special allowance should
    // be made to accept valid ACKs, URGs, and RSTs": the data is dropped (a
    // zero-window probe) and answered with an ACK; a FIN needs no window.
    in.data = {};
    ack_now_ = true;
    return std::nullopt;
  }
  // "If an incoming segment is not acceptable, an acknowledgment should be
  // sent in reply (unless the RST bit is set, if so drop the segment)".
  if (seg.control == tcp_control::rst) return input_result{std::nullopt, drop_reason::rst_unacceptable};
  // TIME-WAIT: a retransmitted FIN is old here; RFC 9293 3.10.7.4 eighth:
  // acknowledge it and restart the 2 MSL timeout.
  if (state_ == tcp_state::time_wait && seg.control == tcp_control::fin) timers_.close = now_ns + cfg_.time_wait_ns;
  return input_result{ack_segment(now_ns), drop_reason::out_of_window};
}

// RFC 9293 3.10.7.4 second, with RFC 5961 3.2 (which RFC 9293 folds in):
// only a RST exactly at RCV.NXT resets; one elsewhere in the window (a
// blind attacker's guess, as likely as not) draws a challenge ACK, which a
// peer that really reset answers with a RST at RCV.NXT. Outside the
// window it was dropped by the sequence check.
connection::step_result connection::check_rst(const tcp_segment& seg, std::uint64_t now_ns) {
  if (seg.control != tcp_control::rst) return std::nullopt;
  if (seg.seq != rcv_nxt_) return input_result{challenge_ack(now_ns), drop_reason::rst_challenged};
  switch (state_) {
    case tcp_state::syn_received:
      // Passive: "return this connection to LISTEN": the listener still
      // listens, this connection just ends. Active: "connection refused".
      if (passive_)
        enter_closed({}, end_reason::handshake_failed);
      else
        enter_closed(std::make_error_code(std::errc::connection_refused), end_reason::refused);
      break;
    case tcp_state::established:
    case tcp_state::fin_wait_1:
    case tcp_state::fin_wait_2:
    case tcp_state::close_wait:
      enter_closed(std::make_error_code(std::errc::connection_reset), end_reason::reset_received);
      break;
    default:  // CLOSING, LAST-ACK, TIME-WAIT: the application has closed.
      enter_closed({}, end_reason::reset_received);
      break;
  }
  return input_result{};
}

// RFC 9293 3.10.7.4 fourth, with RFC 5961 4.2: a SYN in a synchronized
// state draws a challenge ACK and never resets the connection (a peer
// that restarted answers the ACK with a RST at RCV.NXT). SYN-RECEIVED
// from a passive open returns to LISTEN: the listener remains.
connection::step_result connection::check_syn(const incoming& in, std::uint64_t now_ns) {
  if (!in.syn) return std::nullopt;
  if (state_ == tcp_state::syn_received && passive_) {
    enter_closed({}, end_reason::handshake_failed);
    return input_result{std::nullopt, drop_reason::syn_in_window};
  }
  return input_result{challenge_ack(now_ns), drop_reason::syn_challenged};
}

// RFC 5961 7: "an ACK throttling mechanism": at most challenge_ack_limit
// per challenge_ack_window_ns on this connection; past it the segment is
// still dropped, the ACK not sent (counted). Per connection first, so no
// shared counter tells an off-path attacker what another connection drew
// (the CVE-2016-5696 side channel came from one global limit); then the
// stack's budget, whose size is drawn anew each second.
std::optional<tcp_segment> connection::challenge_ack(std::uint64_t now_ns) {
  if (now_ns - challenge_window_start_ns_ >= cfg_.challenge_ack_window_ns) {
    challenge_window_start_ns_ = now_ns;
    challenge_acks_in_window_ = 0;
  }
  if (challenge_acks_in_window_ >= cfg_.challenge_ack_limit) {
    count(&connection_stats::challenge_acks_limited);
    return std::nullopt;
  }
  ++challenge_acks_in_window_;
  // Then the stack's randomized budget (challenge_budget.hh).
  if (cfg_.global_challenge_budget != nullptr && !cfg_.global_challenge_budget->take(now_ns)) {
    count(&connection_stats::challenge_acks_limited);
    return std::nullopt;
  }
  count(&connection_stats::challenge_acks);
  return ack_segment(now_ns);  // <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, SND.MAX: see ack_segment()
}

}  // namespace affine::stack::tcp
