// The receiving side: segment text and FIN (RFC 9293 3.10.7.4 seventh and
// eighth), out-of-order data, when to acknowledge (RFC 1122 4.2.3.2,
// RFC 5681 4.2) and which window to offer (RFC 1122 4.2.3.3, RFC 9293 3.8.6.2.2).

#include <algorithm>

#include "stack/tcp/connection.hh"
#include "stack/tcp/reset.hh"

namespace affine::stack::tcp {

connection::step_result connection::process_data(const tcp_segment& seg, const incoming& in, std::uint64_t now_ns) {
  if (in.data.empty()) return std::nullopt;
  // "CLOSE-WAIT, CLOSING, LAST-ACK, TIME-WAIT: This should not occur since a
  // FIN has been received from the remote side. Ignore the segment text."
  if (state_ != tcp_state::established && state_ != tcp_state::fin_wait_1 && state_ != tcp_state::fin_wait_2)
    return std::nullopt;
  if (user_closed_) {
    // RFC 1122 4.2.2.13: data for an application that closed is lost: RST.
    enter_closed({}, end_reason::data_after_close);
    return input_result{reset_for(seg), drop_reason::data_after_close};
  }
  const std::uint32_t offset = std::uint32_t(in.seq - rcv_nxt_);
  const bool had_holes = !ooo_.empty();
  // RFC 2883 4.1.3: bytes already held out of order came twice, whether the
  // segment lies past a hole or fills one and reaches into them (Linux's
  // tcp_dsack_extend); the first such run is reported.
  for (const assembler::range& r : ooo_.ranges()) {
    const std::size_t from = std::max<std::size_t>(offset, r.first);
    const std::size_t to = std::min<std::size_t>(offset + in.data.size(), r.first + r.second);
    if (from < to) {
      note_duplicate(rcv_nxt_ + std::uint32_t(from), rcv_nxt_ + std::uint32_t(to));
      break;
    }
  }
  if (offset == 0) {
    // In order: readable at once, and the out-of-order data it reaches too.
    const std::size_t n = rcv_buf_.write(in.data);
    ooo_.advance(n);
    const std::size_t joined = ooo_.take_front();
    rcv_buf_.commit(joined);
    rcv_nxt_ += std::uint32_t(n + joined);
    if (n > 0) measure_rcv_rtt(seg, n, now_ns);
    if (n + joined > 0) events_.add(event::readable);
    if (ooo_fin_ && *ooo_fin_ == rcv_nxt_) {
      ooo_fin_.reset();
      receive_fin(now_ns);
    }
    // RFC 5681 4.2: a segment that fills a gap is acknowledged at once.
    if (had_holes) {
      ack_now_ = true;
    } else {
      schedule_ack(n, now_ns);
    }
    return std::nullopt;
  }
  // Out of order (RFC 9293 3.10.7.4 seventh allows keeping it): held in the
  // receive buffer's free space past RCV.NXT, bounded by the buffer and the
  // assembler's range count; RFC 5681 4.2: a duplicate ACK at once.
  const std::size_t n = rcv_buf_.write_at(offset, in.data);
  if (n > 0) {
    if (ooo_.add(offset, n) == assembler::add_result::too_many_ranges) {
      count(&connection_stats::ooo_ranges_full);
    } else {
      note_out_of_order(in.seq);  // new or held already: its block goes first (RFC 2018 4)
    }
  }
  ack_now_ = true;
  return std::nullopt;
}

std::span<std::byte> connection::landing(seq32 seq, std::size_t length) {
  if (length == 0 || seq != rcv_nxt_ || !ooo_.empty() || user_closed_) return {};
  if (state_ != tcp_state::established && state_ != tcp_state::fin_wait_1 && state_ != tcp_state::fin_wait_2)
    return {};
  const std::span<std::byte> at = rcv_buf_.free_contiguous(length);
  return at.size() == length ? at : std::span<std::byte>{};
}

void connection::process_fin(const incoming& in, std::uint64_t now_ns) {
  if (!in.fin) return;
  const seq32 at = in.seq + std::uint32_t(in.data.size());
  if (at == rcv_nxt_) {
    receive_fin(now_ns);
  } else if (at > rcv_nxt_) {
    // Past a hole: processed when the data before it arrives.
    ooo_fin_ = at;
    ack_now_ = true;
  }
}

// RFC 9293 3.10.7.4 eighth: "advance RCV.NXT over the FIN, and send an
// acknowledgment for the FIN", then the state change.
void connection::receive_fin(std::uint64_t now_ns) {
  if (fin_received_) return;
  fin_received_ = true;
  rcv_nxt_ += 1;
  rcv_adv_ = seq_max(rcv_adv_, rcv_nxt_);
  ack_now_ = true;
  events_.add(event::readable);
  switch (state_) {
    case tcp_state::syn_received:
    case tcp_state::established:
      state_ = tcp_state::close_wait;
      break;
    case tcp_state::fin_wait_1:
      // Our FIN not yet acknowledged (the ACK step has run): CLOSING.
      state_ = tcp_state::closing;
      break;
    case tcp_state::fin_wait_2:
      enter_time_wait(now_ns);
      break;
    default:
      break;
  }
}

// RFC 1122 4.2.3.2: ACK at least every second full-sized segment, and no
// later than the delayed-ACK timeout after unacknowledged data arrived. The
// second segment's ACK is due by the end of the receive batch it came in:
// a batch of in-order segments gets one ACK, as Linux's GRO gives it one.
void connection::schedule_ack(std::size_t bytes, std::uint64_t now_ns) {
  unacked_bytes_ += bytes;
  rcv_mss_ = std::max(rcv_mss_, std::uint32_t(std::min<std::size_t>(bytes, cfg_.mss)));
  if (cfg_.delayed_ack_ns == 0) {
    ack_now_ = true;
  } else if (unacked_bytes_ >= 2 * std::size_t(rcv_mss_)) {
    ack_due_ = true;
  } else if (timers_.delayed_ack == no_deadline) {
    timers_.delayed_ack = now_ns + cfg_.delayed_ack_ns;
  }
}

// The right edge to offer: RCV.NXT + the free buffer space (which includes
// the out-of-order bytes past RCV.NXT), moved only by at least
// min(RCV.BUFF / 2, Eff.snd.MSS) (RFC 1122 4.2.3.3, receiver silly window
// avoidance) and never left of what was offered (RFC 9293 3.8.6.2.2).
seq32 connection::offered_edge() const {
  const std::size_t most = std::size_t(0xffff) << rcv_wscale_;
  const seq32 edge = rcv_nxt_ + std::uint32_t(std::min(rcv_buf_.free(), most));
  const auto step = std::int32_t(std::min<std::size_t>(rcv_buf_.capacity() / 2, eff_mss_));
  return edge - rcv_adv_ < step ? seq_max(rcv_adv_, rcv_nxt_) : edge;
}

std::uint16_t connection::advertise_window() {
  const seq32 edge = offered_edge();
  rcv_adv_ = seq_max(rcv_adv_, rcv_nxt_);
  // Rounding to the scale goes down, except where that would move the edge
  // left (RFC 7323 2.4).
  std::uint32_t field = std::uint32_t(edge - rcv_nxt_) >> rcv_wscale_;
  if (rcv_nxt_ + (field << rcv_wscale_) < rcv_adv_) ++field;
  field = std::min<std::uint32_t>(field, 0xffff);
  rcv_adv_ = seq_max(rcv_adv_, rcv_nxt_ + (field << rcv_wscale_));
  return std::uint16_t(field);
}

// Whether reading opened the window enough to say so unasked: by a step
// SWS avoidance allows, to at least twice what the peer was offered
// (Linux tcp_cleanup_rbuf), so a sender stalled by a zero window hears of it.
bool connection::window_update_due() const {
  if (state_ != tcp_state::established && state_ != tcp_state::fin_wait_1 && state_ != tcp_state::fin_wait_2)
    return false;
  const seq32 edge = offered_edge();
  return edge > rcv_adv_ && std::uint32_t(edge - rcv_nxt_) >= 2 * receive_window();
}

}  // namespace affine::stack::tcp
