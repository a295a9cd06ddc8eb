// The SACK sender: received blocks into the scoreboard (RFC 2018 3,
// RFC 2883), loss recovery by the scoreboard and RACK's marks (RFC 6675
// NextSeg and SetPipe, with RFC 8985 deciding what IsLost), and how
// much recovery may send per ACK by Proportional Rate Reduction (RFC 6937,
// with PRR-SSRB; RFC 9937's fast retransmit on entry). Without SACK the
// connection recovers as NewReno does (ack.cc).

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

scoreboard::update connection::take_sack(const tcp_segment& seg, seq32 una_after) {
  const scoreboard::update u =
      sb_.take({seg.options.sack, seg.options.sack_count}, una_after, snd_max_);
  if (u.dsack) count(&connection_stats::dsacks_received);
  if (u.rejected > 0) count(&connection_stats::sack_blocks_rejected, u.rejected);
  if (u.full) count(&connection_stats::sack_ranges_full);
  return u;
}

// RFC 6675 5 (2): with SACK in use, an ACK counts towards DupThresh when it
// leaves SND.UNA where it was and SACKs data not SACKed before, whether or
// not it carries data (the peer may be sending too). One that reports only
// a duplicate (D-SACK, RFC 2883) tells of no loss and does not count.
bool connection::sack_duplicate(const tcp_segment& seg, const scoreboard::update& u) const {
  return snd_max_ != snd_una_ && *seg.ack == snd_una_ && u.newly_sacked > 0;
}

void connection::enter_sack_recovery(std::uint64_t now_ns) {
  count(&connection_stats::sack_recoveries);
  // RFC 6675 5 (4.1): RecoveryPoint = HighData; (4.2) the reduction; the
  // retransmission (4.3) follows from NextSeg on the next output(), which
  // prr_on_ack always allows it.
  in_recovery_ = true;
  recover_ = snd_max_;
  retransmit_head_ = false;
  open_undo_episode(false);
  timers_.loss_probe = no_deadline;  // RFC 8985 7.2: no probe in recovery
  const auto flight = std::uint32_t(snd_max_ - snd_una_);
  cc_->on_enter_recovery(flight, now_ns);
  // RFC 6937 3: RecoverFS = snd.nxt - snd.una; prr_delivered = prr_out = 0.
  recover_fs_ = std::max(flight, std::uint32_t{1});
  prr_delivered_ = prr_out_ = 0;
  sndcnt_ = 0;
}

// RFC 6937 3, on every ACK in recovery (the one that starts it included).
void connection::prr_on_ack(std::uint32_t delivered) {
  prr_delivered_ += delivered;
  const std::uint64_t pipe = sack_pipe();
  const std::uint64_t ssthresh = cc_->ssthresh();
  std::int64_t sndcnt = 0;
  if (pipe > ssthresh) {
    // Proportional: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
    const unsigned __int128 scaled = static_cast<unsigned __int128>(prr_delivered_) * ssthresh;
    const auto due = std::uint64_t((scaled + recover_fs_ - 1) / recover_fs_);
    sndcnt = std::int64_t(due) - std::int64_t(prr_out_);
  } else {
    // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS;
    // sndcnt = MIN(ssthresh - pipe, limit): back up to ssthresh, no faster
    // than slow start.
    const std::int64_t owed = std::int64_t(prr_delivered_) - std::int64_t(prr_out_);
    const std::int64_t limit = std::max<std::int64_t>(owed, delivered) + eff_mss_;
    sndcnt = std::min(std::int64_t(ssthresh - pipe), limit);
  }
  // RFC 9937: nothing sent yet in this recovery: the fast retransmit goes
  // now (RFC 6675 5 (4.3)), though the ACK that started recovery delivered
  // nothing to be proportional to (a repeated SACK block on the peer's
  // data; a RACK mark made as time passed). Linux: tcp_cwnd_reduction.
  if (prr_out_ == 0) sndcnt = std::max<std::int64_t>(sndcnt, eff_mss_);
  sndcnt_ = std::max<std::int64_t>(sndcnt, 0);
}

// RFC 6675 4 SetPipe(), with RACK's marks for IsLost: every byte sent and
// neither acknowledged, SACKed nor lost is in the network once. A lost
// byte sent again is in flight once more (its record is no longer lost),
// as Linux counts: packets_out - (sacked_out + lost_out) + retrans_out.
std::uint32_t connection::sack_pipe() const {
  const std::uint64_t out = std::uint32_t(snd_max_ - snd_una_);
  const std::uint64_t gone = std::uint64_t(sb_.sacked_bytes()) + lost_bytes_;
  return out > gone ? std::uint32_t(out - gone) : 0;
}

// The segment that sends [begin, end), cut to one Eff.snd.MSS of data; the
// FIN goes with the data's last byte when it was sent before.
connection::next_segment connection::cut(seq32 begin, seq32 end, next_segment::kind what) const {
  const seq32 data_end = fin_seq();
  const bool fin_sent = fin_queued_ && snd_max_ > data_end;
  const seq32 data_stop = end < data_end ? end : data_end;
  const std::uint32_t data = begin < data_stop ? std::uint32_t(data_stop - begin) : 0;
  next_segment s{.seq = begin, .len = std::min(data, eff_mss_), .what = what};
  s.fin = fin_sent && begin + s.len == data_end && end > data_end;
  return s;
}

// RFC 6675 4 NextSeg(), rules 1 and 2. Rule 3 (holes not yet lost) and
// rule 4 (RescueRxt, the tail) are left out, as Linux leaves them: RACK
// marks a hole lost within a quarter round trip of a later segment's
// delivery, and a tail whose every later segment was lost too is the
// probe's or the timer's (RFC 8985 7), so sending either early only
// duplicates what reordering delivers anyway.
std::optional<connection::next_segment> connection::next_seg() const {
  // (1) The first un-SACKed byte that RACK marked lost.
  if (auto lost = first_lost()) return lost;
  // (2) New data, within the peer's window, shaped as any new data is.
  const seq32 end = fin_seq();
  const std::uint32_t queued = snd_nxt_ < end ? std::uint32_t(end - snd_nxt_) : 0;
  const seq32 edge = snd_una_ + snd_wnd_;
  const std::uint32_t room = snd_nxt_ < edge ? std::uint32_t(edge - snd_nxt_) : 0;
  const std::uint32_t len = std::min({eff_mss_, queued, room});
  const bool fin = fin_queued_ && snd_nxt_ <= end && len == queued;
  if ((len > 0 || fin) && (len == 0 || send_allowed(len, queued, fin, std::uint32_t(snd_nxt_ - snd_una_))))
    return next_segment{.seq = snd_nxt_, .len = len, .fin = fin, .what = next_segment::kind::new_data};
  return std::nullopt;
}

void connection::output_sack_recovery(std::uint64_t now_ns, segment_sink sink) {
  while (sndcnt_ > 0) {
    const std::optional<next_segment> s = next_seg();
    if (!s || (s->len == 0 && !s->fin)) break;
    send_data_segment(s->seq, s->len, s->fin, now_ns, sink);
    const std::uint32_t used = s->len + (s->fin ? 1 : 0);
    switch (s->what) {
      case next_segment::kind::new_data:
        snd_nxt_ += used;
        snd_max_ = seq_max(snd_max_, snd_nxt_);
        break;
      case next_segment::kind::retransmit:
        count(&connection_stats::fast_retransmits);
        break;
    }
    // RFC 6937: prr_out += data sent; a segment takes a whole sndcnt's
    // worth even when sndcnt was less (segments, not runts, as Linux counts).
    prr_out_ += used;
    sndcnt_ -= std::max<std::uint32_t>(used, 1);
  }
}

}  // namespace affine::stack::tcp
