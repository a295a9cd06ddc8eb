// Explicit Congestion Notification (RFC 3168 6.1). The two SYNs agree on
// it; then new data goes as ECT(0), and a router under load marks it CE
// instead of dropping it. The receiver echoes a CE mark with ECE on every
// ACK until a segment with CWR says the sender reduced; the sender reduces
// its window once a window of data for an echo, as for a loss, with nothing
// resent, and says so with CWR on its next new data.

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

// RFC 3168 6.1.1: an ECN-setup SYN has ECE and CWR; an ECN-setup SYN-ACK
// has ECE and not CWR. Anything else (a simultaneous open's SYN among
// them) leaves ECN off.
void connection::negotiate_ecn(const tcp_segment& syn) {
  if (state_ == tcp_state::syn_sent) {
    ecn_ok_ = cfg_.ecn == ecn_mode::on && syn.ack && syn.ece && !syn.cwr;
  } else {
    ecn_ok_ = cfg_.ecn != ecn_mode::off && syn.ece && syn.cwr;
  }
}

void connection::mark_syn_ecn(tcp_segment& syn, bool retransmission) const {
  if (state_ == tcp_state::syn_sent) {
    // RFC 3168 6.1.1.1: a SYN sent again goes without ECE and CWR, in case
    // a middlebox on the path drops ECN-setup SYNs (Linux does the same).
    syn.ece = syn.cwr = cfg_.ecn == ecn_mode::on && !retransmission;
  } else {
    syn.ece = ecn_ok_;
  }
}

// An acceptable segment (after the ACK step): the receiver's part.
void connection::ecn_arrives(const tcp_segment& seg) {
  if (!ecn_ok_) return;
  // RFC 3168 6.1.3: CWR ends the echo; a CE mark on the same segment starts it again.
  if (seg.cwr) ece_owed_ = false;
  if (seg.ecn != ip_ecn::ce) return;
  count(&connection_stats::ecn_ce_received);
  // The first ACK with ECE goes at once, not after a delayed-ACK timer (Linux).
  if (!ece_owed_) ack_now_ = true;
  ece_owed_ = true;
}

// An ACK with ECE, SND.UNA =< SEG.ACK =< SND.MAX: the sender's part.
void connection::ecn_echo_arrives(const tcp_segment& seg, std::uint64_t now_ns) {
  count(&connection_stats::ecn_echoes_received);
  if (in_recovery_) {
    // The loss's reduction answers this window's congestion too; CWR tells
    // the receiver, and the next reduction waits for data past `recover`.
    cwr_owed_ = true;
    ecn_reduced_ = true;
    ecn_high_ = recover_;
    return;
  }
  // RFC 3168 6.1.2: "not react to congestion indications more than once
  // every window of data": echoes for data sent before the last reduction
  // are that reduction's.
  if (ecn_reduced_ && *seg.ack <= ecn_high_) return;
  ecn_reduced_ = true;
  ecn_high_ = snd_max_;
  cc_->on_ecn_echo(std::uint32_t(snd_max_ - snd_una_), now_ns);
  cwr_owed_ = true;
  count(&connection_stats::ecn_reductions);
  // Not given back by a later verdict on an earlier loss (Linux clears its
  // undo marker on entering CWR): the echo is congestion, not reordering.
  undo_ = undo_episode{};
}

// A data segment about to leave: RFC 3168 6.1.5 and 6.1.6, only new data is
// ECT (a retransmission, a pure ACK, a window probe, a SYN never are), and
// CWR rides on the first new data after a reduction (6.1.2).
void connection::mark_data_ecn(tcp_segment& seg, bool new_data) {
  if (!ecn_ok_ || !new_data || seg.payload.empty()) return;
  seg.ecn = ip_ecn::ect0;
  if (cwr_owed_) {
    seg.cwr = true;
    cwr_owed_ = false;
  }
}

}  // namespace affine::stack::tcp
