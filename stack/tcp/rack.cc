// RACK (RFC 8985 6): loss detection by time. A segment is lost when a
// segment sent after it has been delivered and more than one round trip
// plus the reordering window has passed since it was sent; a lost
// retransmission is found the same way as a lost original. Until reordering
// is seen the window is zero once DupThresh segments are SACKed, which is
// the classic three-duplicate rule (RFC 8985 6.2 step 4).
//
// The transmissions are the sent log's records (sent_log.hh): every send
// goes through note_transmit(), every ACK through rack_on_ack(). Records
// marked lost are what SACK recovery retransmits (sack_recovery.cc); the
// bytes they hold are what pipe leaves out.

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

namespace {

constexpr unsigned dup_thresh = 3;                           // RFC 6675 2 DupThresh
constexpr unsigned reo_wnd_persist_episodes = 16;            // RFC 8985 6.2 step 4
constexpr std::uint64_t min_rtt_window_ns = 300'000'000'000; // Linux's tcp_min_rtt_wlen: 300 s

}  // namespace

// Every transmission of sequence space [begin, end): new data, a
// retransmission, a probe. What a record covers was sent again now; what
// none covers yet is new.
void connection::note_transmit(seq32 begin, seq32 end, std::uint64_t now_ns) {
  if (!sack_ok_ || !(begin < end)) return;
  for (std::size_t i = log_.first_ending_after(begin); i < log_.size() && log_[i].begin < end; ++i) {
    sent_record& r = log_[i];
    lost_bytes_ -= r.lost_bytes;
    r.lost_bytes = 0;
    r.retransmitted = true;
    r.xmit_ns = now_ns;
    rexmit_high_ = seq_max(rexmit_high_, r.end);
  }
  const seq32 covered = log_.empty() ? begin : seq_max(log_.back().end, begin);
  if (covered < end && !log_.append(covered, end, now_ns)) count(&connection_stats::sent_log_full);
}

// RFC 8985 6.2 steps 2 and 3 for one segment newly delivered (cumulatively
// acknowledged or wholly SACKed).
void connection::rack_deliver(const sent_record& r, const tcp_segment& seg, std::uint64_t now_ns) {
  // Step 3: delivered below the highest delivered end, never resent: the
  // network reordered it.
  if (!rack_.have_fack || rack_.fack < r.end) {
    rack_.fack = r.end;
    rack_.have_fack = true;
  } else if (r.end < rack_.fack && !r.retransmitted) {
    if (!rack_.reord) count(&connection_stats::reordering_seen);
    rack_.reord = true;
  }
  const std::uint64_t rtt = now_ns - r.xmit_ns;
  if (r.retransmitted) {
    // Step 2: an ACK that may be for an earlier transmission says nothing
    // about this one: its echo is older than the retransmission, or it
    // came back sooner than any round trip can.
    const auto& ts = seg.options.timestamps;
    if (ts_ok_ && ts && ts->echo != 0 && std::int32_t(ts->echo - ts_clock(r.xmit_ns)) < 0) return;
    if (rtt < rack_.min_rtt_ns) return;
  }
  if (rack_.min_rtt_ns == 0 || rtt <= rack_.min_rtt_ns || now_ns - rack_.min_rtt_at_ns > min_rtt_window_ns) {
    rack_.min_rtt_ns = std::max<std::uint64_t>(rtt, 1);
    rack_.min_rtt_at_ns = now_ns;
  }
  if (!rack_.have || rack_sent_after(r.xmit_ns, r.end, rack_.xmit_ns, rack_.end_seq)) {
    rack_.have = true;
    rack_.rtt_ns = rtt;
    rack_.xmit_ns = r.xmit_ns;
    rack_.end_seq = r.end;
  }
}

// The records within [from, to) whose last bytes a SACK just covered.
void connection::rack_sacked(seq32 from, seq32 to, const tcp_segment& seg, std::uint64_t now_ns) {
  for (std::size_t i = log_.first_ending_after(from); i < log_.size() && log_[i].begin < to; ++i) {
    sent_record& r = log_[i];
    if (r.sacked) continue;
    const std::uint32_t unsacked = unsacked_bytes(r);
    if (r.lost_bytes > 0) {
      lost_bytes_ -= r.lost_bytes - unsacked;
      r.lost_bytes = unsacked;
    }
    if (unsacked > 0) continue;
    r.sacked = true;
    ++sacked_records_;
    rack_deliver(r, seg, now_ns);
  }
}

// After the scoreboard and SND.UNA took an ACK: what it delivered, what it
// shows lost, and recovery when something is.
void connection::rack_on_ack(const tcp_segment& seg, const scoreboard::update& u, std::uint64_t now_ns) {
  while (!log_.empty() && log_.front().end <= snd_una_) {
    const sent_record& r = log_.front();
    if (r.sacked) {
      --sacked_records_;
    } else {
      rack_deliver(r, seg, now_ns);
    }
    lost_bytes_ -= r.lost_bytes;
    log_.pop_front();
  }
  if (!log_.empty() && log_.front().begin < snd_una_) {
    // Partly acknowledged: the rest is what the record still stands for.
    log_.front().begin = snd_una_;
    rack_sacked(snd_una_, log_.front().end, seg, now_ns);
  }
  if (u.fresh_overflow) {
    for (std::size_t i = 0; i < seg.options.sack_count; ++i)
      rack_sacked(seg.options.sack[i].left, seg.options.sack[i].right, seg, now_ns);
  } else {
    for (std::size_t i = 0; i < u.fresh_count; ++i) rack_sacked(u.fresh[i].begin, u.fresh[i].end, seg, now_ns);
  }
  rexmit_high_ = seq_max(rexmit_high_, snd_una_);
  // The D-SACK round ends once SND.UNA passes it, D-SACK or not: a mark
  // left behind would read as ahead again 2^31 bytes later (RFC 9293 3.4).
  if (rack_.dsack_round && snd_una_ >= *rack_.dsack_round) rack_.dsack_round.reset();
  if (u.dsack) rack_on_dsack();
  rack_detect_loss(now_ns);
  if (lost_bytes_ > 0 && !in_recovery_ && snd_una_ >= recover_) enter_sack_recovery(now_ns);
}

// RFC 8985 6.2 step 4, the D-SACK half: a duplicate reported means the
// network reorders more than the window allowed for; widen it by a
// quarter of min_RTT, at most once a round trip, for 16 recoveries.
void connection::rack_on_dsack() {
  if (rack_.dsack_round) return;  // one widening a round (its end: rack_on_ack)
  rack_.dsack_round = snd_max_;
  ++rack_.reo_wnd_mult;
  rack_.reo_wnd_persist = reo_wnd_persist_episodes;
}

// The other half, once per recovery that ends.
void connection::rack_on_recovery_end() {
  if (rack_.reo_wnd_persist > 0 && --rack_.reo_wnd_persist == 0) rack_.reo_wnd_mult = 1;
}

// RFC 8985 6.2 step 4: RACK.reo_wnd.
std::uint64_t connection::rack_reo_wnd() const {
  if (!rack_.reord && (in_recovery_ || sacked_records_ >= dup_thresh)) return 0;
  const std::uint64_t wnd = rack_.min_rtt_ns / 4 * rack_.reo_wnd_mult;
  // SRTT bounds it; with timestamps SRTT counts whole milliseconds (RFC
  // 7323 ticks), so under a tick RACK's own round trip stands in for it.
  return std::min(wnd, std::max(rto_.srtt_ns(), rack_.rtt_ns));
}

// RFC 8985 6.2 step 5: every record sent before RACK's segment, not
// delivered and not yet lost, is lost once RACK.rtt + reo_wnd has passed
// since it left; for the others the reorder timer is armed (6.2 step 6) at
// the latest such deadline.
void connection::rack_detect_loss(std::uint64_t now_ns) {
  timers_.reorder = no_deadline;
  if (!rack_.have) return;
  const std::uint64_t reo_wnd = rack_reo_wnd();
  std::uint64_t latest = 0;
  for (std::size_t i = 0; i < log_.size(); ++i) {
    sent_record& r = log_[i];
    if (r.sacked) {
      // Skip the SACKed run this record starts, in one search.
      if (const std::optional<seq32> past = sb_.sacked_run_end(r.begin))
        i = std::max(i, log_.first_ending_after(*past) - 1);
      continue;
    }
    if (r.lost_bytes > 0) continue;
    if (!rack_sent_after(rack_.xmit_ns, rack_.end_seq, r.xmit_ns, r.end)) {
      // Sent at or after RACK's segment. Originals go in sequence order, so
      // past the retransmitted records every later one is later still.
      if (!r.retransmitted && !(r.begin < rexmit_high_)) break;
      continue;
    }
    const std::uint64_t deadline = r.xmit_ns + rack_.rtt_ns + reo_wnd;
    if (deadline > now_ns) {
      latest = std::max(latest, deadline);
      continue;
    }
    const std::uint32_t unsacked = unsacked_bytes(r);
    if (unsacked == 0) continue;
    r.lost_bytes = unsacked;
    lost_bytes_ += unsacked;
    count(&connection_stats::rack_marked_lost);
    if (r.retransmitted) count(&connection_stats::lost_retransmits);
  }
  if (latest != 0) timers_.reorder = latest;
}

// RFC 8985 6.3: the reorder timer ran out: detect again, and start
// recovery if something is lost, with one segment's worth to send.
void connection::on_reorder_timeout(std::uint64_t now_ns) {
  count(&connection_stats::reorder_timeouts);
  rack_detect_loss(now_ns);
  if (lost_bytes_ == 0) return;
  if (!in_recovery_ && snd_una_ >= recover_) enter_sack_recovery(now_ns);
  if (in_recovery_) sndcnt_ = std::max<std::int64_t>(sndcnt_, eff_mss_);
}

// A retransmission timeout: the peer may have dropped what it SACKed
// (RFC 2018 8), so no record counts as delivered or lost any more; the
// timer resends everything in order (timeouts.cc).
void connection::rack_on_timeout() {
  for (std::size_t i = 0; i < log_.size(); ++i) log_[i].sacked = false;
  sacked_records_ = 0;
  forget_lost_marks();
  timers_.reorder = no_deadline;
}

// No record is lost any more (after a timeout, or an undo).
void connection::forget_lost_marks() {
  for (std::size_t i = 0; i < log_.size(); ++i) log_[i].lost_bytes = 0;
  lost_bytes_ = 0;
}

std::uint32_t connection::unsacked_bytes(const sent_record& r) const {
  return r.length() - sb_.sacked_within(r.begin, r.end);
}

// The first record marked lost, as the segment that repairs it: RFC 6675
// NextSeg rule 1 with RACK's marks for IsLost.
std::optional<connection::next_segment> connection::first_lost() const {
  if (lost_bytes_ == 0) return std::nullopt;
  for (std::size_t i = 0; i < log_.size(); ++i) {
    const sent_record& r = log_[i];
    if (r.lost_bytes == 0) continue;
    const seq32 from = seq_max(r.begin, snd_una_);
    const auto hole = sb_.hole_from(from);
    const seq32 begin = hole ? hole->first : from;
    const seq32 end = hole && hole->second < r.end ? hole->second : r.end;
    if (begin < end) return cut(begin, end, next_segment::kind::retransmit);
  }
  return std::nullopt;
}

}  // namespace affine::stack::tcp
