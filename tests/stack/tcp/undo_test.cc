// Undoing a spurious reduction (undo.cc): Eifel (RFC 3522; RFC 4015 after
// a timeout) and D-SACK (RFC 2883). Timestamps are on, and SACK but for
// the NewReno cases at the end; the round trip is 10 ms; ten full segments
// leave at t0, each 988 bytes (MSS 1000 less the timestamp option),
// written k * seg_bytes below. Segments are read with sent_offsets(),
// since every one carries a timestamp.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

constexpr std::uint64_t rtt_ms = 10;
constexpr std::uint32_t peer_ts = 500;
constexpr std::uint32_t seg_bytes = 988;

class Undo : public tcp_test {
 protected:
  Undo() {
    config.sack = true;
    config.timestamps = true;
  }
  // The handshake, then ten segments at t0 (TSval t0_ts), then a round trip.
  void enter() {
    open();
    const std::uint32_t syn_ts = tsval();
    take_emitted();
    advance(rtt_ms);
    send({.control = syn,
          .seq = rn,
          .ack = iss + 1,
          .options = {.mss = 1000, .sack_permitted = config.sack, .timestamps = tcp_timestamps{peer_ts, syn_ts}}});
    take_emitted();
    ASSERT_TRUE(conn().timestamps_enabled());
    t0_ts = tsval();
    app_write(10 * seg_bytes);
    ASSERT_EQ(sent_offsets().size(), 10u);
    cwnd_before = conn().congestion().cwnd();
    advance(rtt_ms);
  }
  // An ACK echoing `echo`, with SACK blocks (offsets of our data).
  seg ack_seg(std::uint32_t acked, std::uint32_t echo,
              std::initializer_list<std::pair<std::uint32_t, std::uint32_t>> blocks = {}) const {
    seg s{.seq = rn + 1, .ack = iss + 1 + acked, .options = {.timestamps = tcp_timestamps{peer_ts, echo}}};
    for (auto [from, to] : blocks) s.options.sack[s.options.sack_count++] = {iss + 1 + from, iss + 1 + to};
    return s;
  }
  void ack_ts(std::uint32_t acked, std::uint32_t echo,
              std::initializer_list<std::pair<std::uint32_t, std::uint32_t>> blocks = {}) {
    send(ack_seg(acked, echo, blocks));
  }

  // Recovery resends the first segment; a round trip later everything is
  // acknowledged with the retransmission's echo. Returns that echo.
  std::uint32_t recover_by_the_retransmission() {
    ack_ts(0, t0_ts, {{seg_bytes, 4 * seg_bytes}});
    const std::uint32_t rexmit_ts = tsval();
    EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{0});
    advance(rtt_ms);
    ack_ts(10 * seg_bytes, rexmit_ts);
    return rexmit_ts;
  }

  std::uint32_t t0_ts = 0;
  std::uint32_t cwnd_before = 0;
};

// RFC 3522: the ACK that covers the retransmitted first segment echoes the
// original's timestamp: the original arrived, the reduction was for
// nothing, and the window comes back.
TEST_P(Undo, AnEchoOfTheOriginalUndoesTheRecovery_RFC3522) {
  enter();
  ack_ts(0, t0_ts, {{seg_bytes, 4 * seg_bytes}});
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{0});
  EXPECT_EQ(conn().congestion().ssthresh(), 5 * seg_bytes);
  advance(rtt_ms);
  ack_ts(10 * seg_bytes, t0_ts);
  EXPECT_EQ(conn().stats().spurious_undos, 1u);
  EXPECT_EQ(conn().congestion().ssthresh(), UINT32_MAX);
  EXPECT_GE(conn().congestion().cwnd(), cwnd_before);
}

// The same recovery when the retransmission was needed: its echo is the
// retransmission's, nothing is undone.
TEST_P(Undo, AnEchoOfTheRetransmissionKeepsTheReduction) {
  enter();
  recover_by_the_retransmission();
  EXPECT_EQ(conn().stats().spurious_undos, 0u);
  EXPECT_EQ(conn().congestion().ssthresh(), 5 * seg_bytes);
}

// RFC 2883 (Linux's undo_retrans): the retransmission arrived first, then
// the original, which the receiver reports as a duplicate after recovery
// ended: every retransmission was a duplicate, so the reduction goes.
TEST_P(Undo, EveryRetransmissionDsackedUndoesTheRecovery_RFC2883) {
  enter();
  const std::uint32_t rexmit_ts = recover_by_the_retransmission();
  EXPECT_EQ(conn().stats().spurious_undos, 0u);
  ack_ts(10 * seg_bytes, rexmit_ts, {{0, seg_bytes}});
  EXPECT_EQ(conn().stats().spurious_undos, 1u);
  EXPECT_EQ(conn().congestion().ssthresh(), UINT32_MAX);
  EXPECT_EQ(conn().congestion().cwnd(), cwnd_before);
}

// A recovery that ends having resent nothing was spurious: what filled
// its hole was the original. Here the ACK that shows the first segment
// missing and the one that shows it arrived come in one RX burst, so the
// connection's output, run once after the burst, finds nothing lost to
// resend; neither Eifel nor D-SACK has a retransmission to judge by.
TEST_P(Undo, ARecoveryThatResentNothingIsUndone) {
  enter();
  send_burst({ack_seg(0, t0_ts, {{seg_bytes, 4 * seg_bytes}}), ack_seg(4 * seg_bytes, t0_ts)});
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
  EXPECT_EQ(conn().stats().retransmitted_segments, 0u);
  EXPECT_EQ(conn().congestion().ssthresh(), 5 * seg_bytes);
  advance(rtt_ms);
  ack_ts(10 * seg_bytes, t0_ts);  // RecoveryPoint: recovery ends
  EXPECT_EQ(conn().stats().spurious_undos, 1u);
  EXPECT_EQ(conn().congestion().ssthresh(), UINT32_MAX);
  EXPECT_GE(conn().congestion().cwnd(), cwnd_before);
  EXPECT_EQ(conn().describe(now).find("recovery=true"), std::string::npos);
}

// A retransmitted tail loss probe still out when recovery starts may be
// what repairs the loss (RFC 8985 7.4.2): a recovery that resent nothing
// of its own is not undone then.
TEST_P(Undo, ARecoveryBehindARetransmittedProbeIsNotUndoneForResendingNothing) {
  enter();
  advance(20);  // the probe: the last segment again (nothing new to send)
  ASSERT_EQ(conn().stats().loss_probes, 1u);
  ASSERT_EQ(sent_offsets(), std::vector<std::uint32_t>{9 * seg_bytes});
  send_burst({ack_seg(0, t0_ts, {{seg_bytes, 4 * seg_bytes}}), ack_seg(4 * seg_bytes, t0_ts)});
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
  EXPECT_EQ(conn().stats().retransmitted_segments, 1u);  // the probe's
  advance(rtt_ms);
  ack_ts(10 * seg_bytes, t0_ts);
  EXPECT_EQ(conn().stats().spurious_undos, 0u);
  EXPECT_EQ(conn().congestion().ssthresh(), 5 * seg_bytes);
}

// RFC 4015: a timeout whose retransmission is answered by an ACK echoing
// the original was spurious (a delay, not a loss): the window comes back,
// and sending goes on with new data instead of resending what is out.
TEST_P(Undo, ASpuriousTimeoutResumesWithNewData_RFC4015) {
  enter();
  advance(300);  // the tail loss probe, then the timeout: the first segment again
  EXPECT_EQ(conn().stats().retransmission_timeouts, 1u);
  take_emitted();
  EXPECT_EQ(conn().congestion().cwnd(), seg_bytes);
  app_write(3 * seg_bytes);
  ack_ts(5 * seg_bytes, t0_ts);  // the originals were only late
  EXPECT_EQ(conn().stats().spurious_undos, 1u);
  EXPECT_GE(conn().congestion().cwnd(), cwnd_before);
  // Not the sixth segment again (go-back-N would): the new data.
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{10 * seg_bytes, 11 * seg_bytes, 12 * seg_bytes}));
}

TCP_IN_BOTH_SEQUENCE_SPACES(Undo);

// The same episodes with a peer that has no SACK: NewReno's fast
// retransmit (RFC 6582) is judged by Eifel and by having resent nothing.
class UndoWithoutSack : public Undo {
 protected:
  UndoWithoutSack() { config.sack = false; }
  void three_duplicate_acks() {
    for (int i = 0; i < 3; ++i) ack_ts(0, t0_ts);
  }
};

// RFC 3522: the first segment was late, not lost. The ACK that covers it
// echoes the original's timestamp; it is a partial acknowledgment (RFC
// 6582), yet the reduction goes and nothing more is resent.
TEST_P(UndoWithoutSack, AnEchoOfTheOriginalUndoesTheFastRetransmit_RFC3522) {
  enter();
  three_duplicate_acks();
  EXPECT_EQ(conn().stats().fast_retransmits, 1u);
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{0});
  EXPECT_EQ(conn().congestion().ssthresh(), 5 * seg_bytes);
  advance(rtt_ms);
  ack_ts(4 * seg_bytes, t0_ts);
  EXPECT_EQ(conn().stats().spurious_undos, 1u);
  EXPECT_EQ(conn().congestion().ssthresh(), UINT32_MAX);
  EXPECT_GE(conn().congestion().cwnd(), cwnd_before);
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{});  // no partial-ACK resend
  EXPECT_EQ(conn().describe(now).find("recovery=true"), std::string::npos);
}

// The retransmission was needed: the ACK echoes it, the reduction stays.
TEST_P(UndoWithoutSack, AnEchoOfTheRetransmissionKeepsTheReduction) {
  enter();
  three_duplicate_acks();
  const std::uint32_t rexmit_ts = tsval();
  EXPECT_EQ(sent_offsets(), std::vector<std::uint32_t>{0});
  advance(rtt_ms);
  ack_ts(10 * seg_bytes, rexmit_ts);
  EXPECT_EQ(conn().stats().spurious_undos, 0u);
  EXPECT_EQ(conn().congestion().ssthresh(), 5 * seg_bytes);
}

// The three duplicates and the ACK of everything come in one RX burst:
// output, run once after it, has nothing to resend, and the recovery that
// resent nothing is undone.
TEST_P(UndoWithoutSack, AFastRecoveryThatResentNothingIsUndone) {
  enter();
  send_burst({ack_seg(0, t0_ts), ack_seg(0, t0_ts), ack_seg(0, t0_ts), ack_seg(10 * seg_bytes, t0_ts)});
  EXPECT_EQ(conn().stats().fast_retransmits, 1u);
  EXPECT_EQ(conn().stats().retransmitted_segments, 0u);
  EXPECT_EQ(conn().stats().spurious_undos, 1u);
  EXPECT_EQ(conn().congestion().ssthresh(), UINT32_MAX);
  EXPECT_GE(conn().congestion().cwnd(), cwnd_before);
}

TCP_IN_BOTH_SEQUENCE_SPACES(UndoWithoutSack);

}  // namespace
}  // namespace affine::stack::tcp::testing
