// output(): everything that is due, in one pass. The SYN or SYN,ACK; the
// fast retransmission; data within min(cwnd, peer window), shaped by Nagle
// and sender silly window avoidance; the FIN; probes; a pure ACK or window
// update when nothing else carried one; the RST after abort().

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

void connection::output(std::uint64_t now_ns, segment_sink sink) {
  now_ns = monotone_now(now_ns);
  if (rst_pending_) {
    // RFC 9293 3.10.5 ABORT: <SEQ=SND.NXT><CTL=RST>; the highest sequence
    // number sent is the one the peer's window surely accepts.
    rst_pending_ = false;
    tcp_segment rst = make_segment(tcp_control::rst, snd_max_, now_ns);
    emit(rst, sink);
    return;
  }
  switch (state_) {
    case tcp_state::closed:
    case tcp_state::listen:
      return;
    case tcp_state::syn_sent:
    case tcp_state::syn_received:
      output_syn(now_ns, sink);
      return;
    default:
      break;
  }
  adjust_rcv_space(now_ns);
  output_data(now_ns, sink);
  if (loss_probe_due_) output_loss_probe(now_ns, sink);
  output_probes(now_ns, sink);
  if (ack_now_ || ack_due_ || window_update_due()) {
    tcp_segment ack = make_segment(tcp_control::none, snd_max_, now_ns);  // SND.MAX: see ack_segment()
    emit(ack, sink);
  }
}

// RFC 9293 3.10.1 (SYN) and 3.10.7.2 (SYN,ACK): sent when SND.NXT is at ISS,
// first or again after a timeout.
void connection::output_syn(std::uint64_t now_ns, segment_sink sink) {
  if (snd_nxt_ != iss_) return;
  tcp_segment syn = make_segment(tcp_control::syn, iss_, now_ns);
  if (snd_max_ != iss_) {
    count(&connection_stats::retransmitted_segments);
  } else {
    // RFC 6298 3 (Karn): time the first SYN only. With timestamps
    // negotiated the echo is used instead (sample_rtt).
    rtt_seq_ = iss_;
    rtt_start_ns_ = now_ns;
  }
  snd_nxt_ = iss_ + 1;
  snd_max_ = snd_nxt_;
  emit(syn, sink);
  start_retransmit_timer(now_ns);
}

void connection::output_data(std::uint64_t now_ns, segment_sink sink) {
  const bool may_send = state_ == tcp_state::established || state_ == tcp_state::fin_wait_1 ||
                        state_ == tcp_state::close_wait || state_ == tcp_state::closing ||
                        state_ == tcp_state::last_ack;
  if (!may_send) return;
  if (in_recovery_ && sack_ok_) {
    // RFC 6675 with PRR: everything recovery sends, new data included.
    output_sack_recovery(now_ns, sink);
    return;
  }
  if (retransmit_head_) {
    // RFC 5681 3.2 step 3, RFC 6582 3.2 steps 3 and 5: resend the first
    // unacknowledged segment, whatever the windows say: no more of it than
    // was sent (a segment the peer's window cut short is resent as short;
    // bytes never sent are new data, which the windows govern, and past
    // SND.MAX the peer's ACK of them would be dropped).
    retransmit_head_ = false;
    const auto sent = std::uint32_t(seq_min(snd_max_, fin_seq()) - snd_una_);
    const auto len = std::uint32_t(std::min<std::size_t>({eff_mss_, snd_buf_.size(), sent}));
    const bool fin = fin_queued_ && snd_una_ + len == fin_seq() && snd_max_ > fin_seq();
    if (len > 0 || fin) send_data_segment(snd_una_, len, fin, now_ns, sink);
  }
  // RFC 5681 4.1: after an idle period longer than the RTO, restart from
  // the restart window.
  if (snd_una_ == snd_max_ && last_send_ns_ != 0 && now_ns - last_send_ns_ > rto_.rto_ns())
    cc_->on_idle_restart(now_ns);
  std::uint32_t queued = 0;
  bool paced = false;
  for (;;) {
    // Going back over what was sent after a timeout: what the peer SACKed
    // since needs no second copy (RFC 6675 5.1 lets the sender use it).
    if (sack_ok_ && snd_nxt_ < snd_max_)
      if (const std::optional<seq32> past = sb_.sacked_run_end(snd_nxt_)) {
        snd_nxt_ = *past < snd_max_ ? *past : snd_max_;
        continue;
      }
    const seq32 end = fin_seq();
    queued = snd_nxt_ < end ? std::uint32_t(end - snd_nxt_) : 0;
    const bool fin_unsent = fin_queued_ && snd_nxt_ <= end;
    const auto flight = std::uint32_t(snd_nxt_ - snd_una_);
    const std::uint32_t wnd = std::min(snd_wnd_, cc_->cwnd());
    const std::uint32_t usable = wnd > flight ? wnd - flight : 0;
    const std::uint32_t len = std::min({eff_mss_, queued, usable});
    // The FIN rides on the segment that ends the data; it needs no window.
    const bool fin = fin_unsent && len == queued;
    if (len == 0 && !fin) break;
    if (len > 0 && !send_allowed(len, queued, fin, flight)) break;
    if (pacing_holds(now_ns)) {
      paced = true;
      break;
    }
    const bool fresh = snd_nxt_ == snd_max_;
    send_data_segment(snd_nxt_, len, fin, now_ns, sink);
    note_paced(len, now_ns);
    snd_nxt_ += len + (fin ? 1 : 0);
    snd_max_ = seq_max(snd_max_, snd_nxt_);
    // RFC 8985 7.2: new data (not itself a probe) starts the probe timer.
    if (fresh) arm_loss_probe(now_ns);
  }
  note_cwnd_use();
  adjust_snd_space();
  // Data held back with nothing in flight: no ACK will come to release it.
  // The persist timer sends it, or probes a zero window (RFC 9293 3.8.6.1,
  // RFC 1122 4.2.3.4's override timeout); the retransmission timer has
  // nothing to do meanwhile (BSD tcp_output).
  if (queued > 0 && !paced && snd_nxt_ == snd_una_ && timers_.persist == no_deadline) {
    timers_.retransmit = no_deadline;
    arm_persist(now_ns);
  }
}

// RFC 1122 4.2.3.4 (sender silly window avoidance, with Nagle, RFC 896).
bool connection::send_allowed(std::uint32_t len, std::uint32_t queued, bool fin, std::uint32_t flight) const {
  if (len >= eff_mss_) return true;  // (1) a full-sized segment
  if (fin) return true;              // the last data goes with the FIN (Nagle holds no FIN, like Linux)
  // (2) all the queued data, and Nagle: no unacknowledged data (or no_delay).
  if (len == queued && (cfg_.no_delay || flight == 0)) return true;
  // (3) at least Fs = 1/2 of the largest window the peer has offered.
  if (max_snd_wnd_ > 0 && len >= max_snd_wnd_ / 2) return true;
  // Sent before, going out again after a timeout (BSD tcp_output).
  return snd_nxt_ < snd_max_;
}

void connection::send_data_segment(seq32 seq, std::uint32_t len, bool fin, std::uint64_t now_ns,
                                   segment_sink sink) {
  tcp_segment seg = make_segment(fin ? tcp_control::fin : tcp_control::none, seq, now_ns);
  if (seg.options.sack_count > 0) {  // the blocks and the payload share Eff.snd.MSS
    seg.options.sack_count = 0;
    add_sack_blocks(seg.options, len < eff_mss_ ? eff_mss_ - len : 0);
  }
  seg.payload = send_bytes(seq, len);
  // RFC 9293 3.9.1: PUSH on the segment that empties the send buffer.
  seg.psh = len > 0 && seq + len == fin_seq();
  mark_data_ecn(seg, seq >= snd_max_);
  if (seq < snd_max_) {
    count(&connection_stats::retransmitted_segments);
    note_episode_retransmission(now_ns);
    // RFC 6298 3 (Karn): a retransmitted segment gives no RTT sample.
    if (rtt_seq_ && *rtt_seq_ >= seq) rtt_seq_.reset();
  } else if (!ts_ok_ && !rtt_seq_ && len > 0) {
    rtt_seq_ = seq;
    rtt_start_ns_ = now_ns;
  }
  // Nothing was in flight: the time since the last data sent was the
  // application's, not the path's (RFC 9438 5.8).
  if (seq >= snd_max_ && snd_una_ == snd_max_ && last_send_ns_ != 0)
    cc_->on_send_from_empty(now_ns, now_ns - last_send_ns_);
  last_send_ns_ = now_ns;
  note_transmit(seq, seq + len + (fin ? 1 : 0), now_ns);
  emit(seg, sink);
  // RFC 6298 5.1: start the timer if it is not running; data in flight
  // makes the persist timer moot.
  start_retransmit_timer(now_ns);
  timers_.persist = no_deadline;
}

void connection::output_probes(std::uint64_t now_ns, segment_sink sink) {
  if (persist_probe_due_) {
    persist_probe_due_ = false;
    const seq32 end = fin_seq();
    const std::uint32_t queued = snd_nxt_ < end ? std::uint32_t(end - snd_nxt_) : 0;
    if (queued > 0 && snd_nxt_ == snd_una_) {
      count(&connection_stats::persist_probes);
      if (snd_wnd_ == 0) {
        // RFC 9293 3.8.6.1: probe a zero window with one octet of new data.
        // SND.NXT stays: the octet is sent again as data once the window opens.
        tcp_segment probe = make_segment(tcp_control::none, snd_nxt_, now_ns);
        probe.payload = send_bytes(snd_nxt_, 1);
        snd_max_ = seq_max(snd_max_, snd_nxt_ + 1);
        note_transmit(snd_nxt_, snd_nxt_ + 1, now_ns);
        emit(probe, sink);
      } else {
        // RFC 1122 4.2.3.4 (4): the override timeout sends what fits.
        const std::uint32_t len = std::min({queued, snd_wnd_, eff_mss_});
        send_data_segment(snd_nxt_, len, false, now_ns, sink);
        snd_nxt_ += len;
        snd_max_ = seq_max(snd_max_, snd_nxt_);
      }
      ++persist_backoff_;
      if (snd_nxt_ == snd_una_) arm_persist(now_ns);
    }
  }
  if (keepalive_probe_due_) {
    // RFC 1122 4.2.3.6: <SEQ=SND.NXT-1><ACK=RCV.NXT>, no data: the peer
    // answers with an ACK.
    keepalive_probe_due_ = false;
    count(&connection_stats::keepalive_probes);
    tcp_segment probe = make_segment(tcp_control::none, snd_nxt_ - 1, now_ns);
    emit(probe, sink);
  }
}

std::span<const std::byte> connection::send_bytes(seq32 seq, std::uint32_t len) {
  const std::size_t offset = std::uint32_t(seq - snd_data_);
  const std::span<const std::byte> direct = snd_buf_.contiguous_at(offset, len);
  if (direct.size() == len) return direct;
  // The segment wraps around the end of the ring: one copy into scratch.
  const std::span<std::byte> copy{scratch_.get(), len};
  snd_buf_.peek(offset, copy);
  return copy;
}

tcp_segment connection::make_segment(tcp_control control, seq32 seq, std::uint64_t now_ns) {
  tcp_segment seg;
  seg.src_port = tuple_.local_port;
  seg.dst_port = tuple_.remote_port;
  seg.control = control;
  seg.seq = seq;
  if (control == tcp_control::syn) {
    // Our SYN carries no ACK; a SYN,ACK does. RFC 7323 2.2: never scaled.
    if (state_ != tcp_state::syn_sent) seg.ack = rcv_nxt_;
    seg.window = syn_window();
    seg.options = syn_options(now_ns);
    mark_syn_ecn(seg, snd_max_ != iss_);  // RFC 3168 6.1.1; SND.MAX past ISS: sent before
    return seg;
  }
  if (control != tcp_control::rst) {
    seg.ack = rcv_nxt_;
    seg.window = advertise_window();
    seg.ece = ece_owed_;  // RFC 3168 6.1.3: on every ACK until CWR comes
  }
  // RFC 7323 3.2: on every segment once negotiated (a RST SHOULD carry it).
  if (ts_ok_) seg.options.timestamps = tcp_timestamps{ts_clock(now_ns), ts_recent_};
  // RFC 2018 4: SACK blocks on every ACK while data past RCV.NXT is held,
  // or a duplicate is owed a D-SACK (a data segment trims them to what fits
  // beside its payload).
  if (sack_ok_ && control != tcp_control::rst && (!ooo_.empty() || dsack_)) add_sack_blocks(seg.options, eff_mss_);
  return seg;
}

// An ACK about to be sent: nothing is owed any more.
void connection::note_sent(const tcp_segment& seg) {
  ++stats_.segments_sent;
  if (!seg.ack) return;
  if (dsack_ && seg.options.sack_count > 0 && seg.options.sack[0] == *dsack_) dsack_.reset();
  ack_now_ = ack_due_ = false;
  unacked_bytes_ = 0;
  timers_.delayed_ack = no_deadline;
  last_ack_sent_ = *seg.ack;
}

void connection::emit(const tcp_segment& seg, segment_sink sink) {
  note_sent(seg);
  sink(seg);
}

// A pure ACK carries SND.MAX, the highest sequence number sent, rather than
// SND.NXT: after a retransmission timeout SND.NXT goes back to SND.UNA, and
// an ACK numbered there can lie wholly before the peer's RCV.NXT, where the
// RFC 9293 3.10.7.4 acceptability test drops it unread. Two sides that both
// timed out would then drop each other's ACKs for ever (seen in the lossy
// wire test); Linux never moves SND.NXT back, so its ACKs never go old.
tcp_segment connection::ack_segment(std::uint64_t now_ns) {
  tcp_segment ack = make_segment(tcp_control::none, snd_max_, now_ns);
  note_sent(ack);
  return ack;
}

}  // namespace affine::stack::tcp
