// The three-way handshake from our side: SEGMENT ARRIVES in SYN-SENT
// (RFC 9293 3.10.7.3) and the ACK of our SYN in SYN-RECEIVED (3.10.7.4 fifth).

#include <algorithm>

#include "stack/tcp/connection.hh"
#include "stack/tcp/reset.hh"

namespace affine::stack::tcp {

connection::input_result connection::syn_sent_arrives(const tcp_segment& seg, std::uint64_t now_ns) {
  // First: the ACK bit. "If SEG.ACK =< ISS or SEG.ACK > SND.NXT, send a
  // reset (unless the RST bit is set, if so drop the segment and return)".
  if (seg.ack && (*seg.ack <= iss_ || *seg.ack > snd_max_)) return {reset_for(seg), drop_reason::unacceptable_ack};
  // Second: RST. Only a RST that acknowledges our SYN is believed (the same
  // rule as RFC 5961 3.2 for this state): "connection reset", CLOSED.
  if (seg.control == tcp_control::rst) {
    if (!seg.ack) return {std::nullopt, drop_reason::rst_unacceptable};
    enter_closed(std::make_error_code(std::errc::connection_refused), end_reason::refused);
    return {};
  }
  // Fifth: "If neither of the SYN or RST bits is set, then drop the segment".
  if (seg.control != tcp_control::syn) return {std::nullopt, drop_reason::syn_sent_no_syn};
  // Fourth: SYN. "RCV.NXT is set to SEG.SEQ+1, IRS is set to SEG.SEQ".
  last_rx_ns_ = now_ns;
  irs_ = seg.seq;
  rcv_nxt_ = seg.seq + 1;
  negotiate(seg, now_ns);
  rcv_adv_ = rcv_nxt_ + syn_window();
  // RFC 7323 2.2: the window of a SYN is never scaled.
  snd_wnd_ = max_snd_wnd_ = seg.window;
  snd_wl1_ = seg.seq;
  if (!seg.ack) {
    // Simultaneous open (RFC 9293 3.5 Figure 7): SYN-RECEIVED, and our SYN
    // goes out again as <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK>. Text in the
    // SYN is not kept: the peer sends it again once synchronized.
    state_ = tcp_state::syn_received;
    snd_wl2_ = iss_;
    snd_nxt_ = iss_;
    rtt_seq_.reset();
    timers_.retransmit = no_deadline;
    return {};
  }
  // "If SND.UNA > ISS (our SYN has been ACKed), change the connection state
  // to ESTABLISHED, form an ACK segment and send it" (output() may add data).
  snd_wl2_ = *seg.ack;
  enter_established(now_ns);
  process_new_ack(seg, now_ns);
  ack_now_ = true;
  // "If there are other controls or text in the segment, then continue
  // processing at the sixth step": the text after the SYN.
  incoming in{seg.seq + 1, false, false, seg.payload};
  trim_to_window(in);
  process_data(seg, in, now_ns);
  return {};
}

// RFC 9293 3.10.7.4 fifth, SYN-RECEIVED: "If SND.UNA < SEG.ACK =< SND.NXT,
// then enter ESTABLISHED state and continue processing"; otherwise
// <SEQ=SEG.ACK><CTL=RST>. The rest of the ACK is processed as in ESTABLISHED.
connection::step_result connection::syn_received_ack(const tcp_segment& seg, std::uint64_t now_ns) {
  if (!(snd_una_ < *seg.ack && *seg.ack <= snd_max_)) return input_result{reset_for(seg), drop_reason::unacceptable_ack};
  if (admission_) {
    // Linux with tcp_abort_on_overflow = 0: a full accept queue ignores the
    // final ACK; the SYN,ACK is sent again later and the peer's next ACK
    // may find room (see listener.hh).
    if (!admission_->admit(*this)) return input_result{std::nullopt, drop_reason::accept_queue_full};
    admission_ = nullptr;  // asked once
    events_.add(event::accept_ready);
  }
  // "SND.WND <- SEG.WND, SND.WL1 <- SEG.SEQ, SND.WL2 <- SEG.ACK".
  snd_wnd_ = std::uint32_t(seg.window) << snd_wscale_;
  max_snd_wnd_ = std::max(max_snd_wnd_, snd_wnd_);
  snd_wl1_ = seg.seq;
  snd_wl2_ = *seg.ack;
  enter_established(now_ns);
  return std::nullopt;
}

void connection::syn_ack_sent(std::uint64_t now_ns) {
  output(now_ns, [](const tcp_segment&) {});  // what output() would send: the SYN-ACK, into the void
}

}  // namespace affine::stack::tcp
