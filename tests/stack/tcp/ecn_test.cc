// ECN (RFC 3168 6.1): the two SYNs agree on it; then only new data is
// ECT(0); a CE mark is echoed with ECE until a CWR comes; an echo reduces
// the window once a window of data, grows nothing, and the next new data
// carries CWR.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Ecn : public tcp_test {
 protected:
  Ecn() {
    config.ecn = ecn_mode::on;
    config.congestion = congestion_algorithm::new_reno;  // ssthresh = FlightSize / 2
  }
  // Active open with ECN agreed: the ECN-setup SYN, the ECN-setup SYN-ACK.
  void establish_ecn() {
    open();
    expect({.control = syn, .seq = iss, .options = {.mss = config.mss}, .ece = true, .cwr = true});
    send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = config.mss}, .ece = true});
    expect({.seq = iss + 1, .ack = rn + 1});
    ASSERT_EQ(conn().state(), tcp_state::established);
    ASSERT_TRUE(conn().ecn_enabled());
  }
  // The peer's data at `offset` of its stream.
  void peer_data(std::uint32_t offset, std::uint32_t len, ip_ecn ecn = ip_ecn::not_ect, bool cwr = false) {
    send({.seq = rn + 1 + offset, .ack = iss + 1, .payload = pattern(offset, len), .cwr = cwr, .ecn = ecn});
  }
  // The ACK of the peer's first `received` bytes, which the application has
  // not read, when we have sent `sent` bytes.
  seg our_ack(std::uint32_t received, bool ece, std::uint32_t sent = 0) {
    return {.seq = iss + 1 + sent, .ack = rn + 1 + received, .window = std::uint16_t(default_window() - received),
            .ece = ece};
  }
  // `count` segments of 1000 written; each ECT(0), the first with CWR when `cwr`.
  void write_ect_segments(std::uint32_t first, std::uint32_t count, bool cwr = false) {
    app_write(std::size_t(count) * 1000);
    for (std::uint32_t k = 0; k < count; ++k) {
      const std::uint32_t offset = 1000 * (first + k);
      expect({.seq = iss + 1 + offset, .ack = rn + 1, .payload = pattern(offset, 1000), .psh = k + 1 == count,
              .cwr = cwr && k == 0, .ecn = ip_ecn::ect0});
    }
  }
  drop_reason ack_with_ece(std::uint32_t acked, bool ece = true) {
    return send({.seq = rn + 1, .ack = iss + 1 + acked, .ece = ece});
  }
};

TEST_P(Ecn, AnEcnSetupSynGetsAnEcnSetupSynAck_RFC3168_6_1_1) {
  config.ecn = ecn_mode::passive;
  listen();
  send({.control = syn, .seq = rn, .options = {.mss = 1000}, .ece = true, .cwr = true});
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}, .ece = true});
  send({.seq = rn + 1, .ack = iss + 1});
  ASSERT_EQ(conn().state(), tcp_state::established);
  EXPECT_TRUE(conn().ecn_enabled());
}

TEST_P(Ecn, OnlyEceAndCwrTogetherAskAndOffRefusesThem_RFC3168_6_1_1) {
  config.ecn = ecn_mode::passive;
  listen();
  // ECE alone is not an ECN-setup SYN.
  send({.control = syn, .seq = rn, .options = {.mss = 1000}, .ece = true});
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
  EXPECT_FALSE(conn().ecn_enabled());
  config.ecn = ecn_mode::off;
  send({.control = syn, .seq = rn + 50, .options = {.mss = 1000}, .peer = 40001, .ece = true, .cwr = true});
  expect({.control = syn, .seq = iss_for(40001), .ack = rn + 51, .options = {.mss = 1000}, .peer = 40001});
  EXPECT_FALSE(conn(40001).ecn_enabled());
}

TEST_P(Ecn, AnActiveOpenAsksOnlyWhenOn_RFC3168_6_1_1) {
  config.ecn = ecn_mode::passive;
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  // A SYN-ACK with ECE answers a SYN that did not ask: ECN stays off.
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}, .ece = true});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_FALSE(conn().ecn_enabled());
}

TEST_P(Ecn, ASynAckWithEceAndCwrIsNotEcnSetup_RFC3168_6_1_1) {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}, .ece = true, .cwr = true});
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000}, .ece = true, .cwr = true});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_FALSE(conn().ecn_enabled());
  app_write(1000);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000), .psh = true});  // not ECT
}

TEST_P(Ecn, ASynSentAgainNoLongerAsks_RFC3168_6_1_1_1) {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}, .ece = true, .cwr = true});
  advance(1000);  // RFC 6298 2.1: the first RTO
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
}

TEST_P(Ecn, OnlyNewDataIsEct_RFC3168_6_1_5) {
  establish_ecn();
  app_write(1000);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000), .psh = true, .ecn = ip_ecn::ect0});
  // 6.1.5: "MUST NOT set an ECN-capable codepoint ... on retransmitted data packets".
  advance(1000);
  const auto resent = take_emitted();
  ASSERT_FALSE(resent.empty());
  for (const seg& s : resent) {
    EXPECT_EQ(s.seq, iss + 1);
    EXPECT_EQ(s.ecn, ip_ecn::not_ect);
  }
  // 6.1.4: nor on pure ACKs.
  ack_with_ece(1000, false);
  peer_data(0, 1000);
  peer_data(1000, 1000);
  expect(our_ack(2000, false, 1000));
  // 6.1.6: nor on a window probe.
  send({.seq = rn + 2001, .ack = iss + 1001, .window = 0});
  app_write(500);
  expect_nothing();
  advance(1000);
  const auto probe = take_emitted();
  ASSERT_FALSE(probe.empty());
  EXPECT_EQ(probe.front().payload.size(), 1u);
  EXPECT_EQ(probe.front().ecn, ip_ecn::not_ect);
}

TEST_P(Ecn, ACeMarkIsEchoedOnEveryAckUntilCwr_RFC3168_6_1_3) {
  establish_ecn();
  // The first CE: an ACK at once, not after the delayed-ACK timer.
  peer_data(0, 1000, ip_ecn::ce);
  expect(our_ack(1000, true));
  EXPECT_EQ(conn().stats().ecn_ce_received, 1u);
  // Unmarked data: still echoed.
  peer_data(1000, 1000, ip_ecn::ect0);
  peer_data(2000, 1000, ip_ecn::ect0);
  expect(our_ack(3000, true));
  // CWR ends the echo.
  peer_data(3000, 1000, ip_ecn::ect0, true);
  peer_data(4000, 1000, ip_ecn::ect0);
  expect(our_ack(5000, false));
  // A CWR segment that is itself CE-marked starts it again.
  peer_data(5000, 1000, ip_ecn::ce, true);
  expect(our_ack(6000, true));
  EXPECT_EQ(conn().stats().ecn_ce_received, 2u);
}

TEST_P(Ecn, CeIsIgnoredWithoutEcn_RFC3168_6_1_1) {
  config.ecn = ecn_mode::passive;
  establish();  // ECN not asked for
  peer_data(0, 1000, ip_ecn::ce);
  peer_data(1000, 1000, ip_ecn::ce);
  expect(our_ack(2000, false));
  EXPECT_EQ(conn().stats().ecn_ce_received, 0u);
}

TEST_P(Ecn, AnEchoHalvesTheWindowOnceAWindowAndCwrFollows_RFC3168_6_1_2) {
  establish_ecn();
  write_ect_segments(0, 10);  // the initial window: 10 segments
  ASSERT_EQ(conn().congestion().cwnd(), 10000u);
  // The first echo: ssthresh = FlightSize / 2, cwnd = ssthresh, and no
  // growth for the 1000 bytes it acknowledges.
  ack_with_ece(1000);
  EXPECT_EQ(conn().congestion().ssthresh(), 5000u);
  EXPECT_EQ(conn().congestion().cwnd(), 5000u);
  EXPECT_EQ(conn().stats().ecn_reductions, 1u);
  expect_nothing();  // 9000 in flight, cwnd 5000: nothing is resent either
  // More echoes for data sent before the reduction: the same congestion.
  ack_with_ece(2000);
  ack_with_ece(6000);
  EXPECT_EQ(conn().congestion().cwnd(), 5000u);
  EXPECT_EQ(conn().stats().ecn_reductions, 1u);
  EXPECT_EQ(conn().stats().ecn_echoes_received, 3u);
  // Everything acknowledged, no echo; the first new data says CWR.
  ack_with_ece(10000, false);
  write_ect_segments(10, 2, true);
  // An echo for data sent after the reduction is new congestion.
  ack_with_ece(11000);
  EXPECT_EQ(conn().stats().ecn_reductions, 2u);
  write_ect_segments(12, 1, true);
}

// "Once a window" is judged by the sequence number the last reduction
// stopped at, modulo 2^32: 2^31 bytes later that mark would read as ahead
// again, and echoes would be taken as the old reduction's for the next
// 2^31 bytes. It holds only until SND.UNA passes it.
TEST_P(Ecn, AnEchoAfterTwoGibibytesIsNewCongestion_RFC3168_6_1_2) {
  config.mss = 20000;
  establish_ecn();
  app_write(20000);
  ASSERT_EQ(take_emitted().size(), 1u);
  ack_with_ece(20000);
  ASSERT_EQ(conn().stats().ecn_reductions, 1u);
  const std::uint32_t far = (1u << 31) + (1u << 20);
  stream_acked(far);
  app_write(20000);
  ASSERT_EQ(take_emitted().size(), 1u);
  ack_with_ece(20000 + far + 20000);
  EXPECT_EQ(conn().stats().ecn_reductions, 2u);
  take_emitted();
}

TEST_P(Ecn, AnEchoDuringLossRecoveryOnlyOwesCwr_RFC3168_6_1_2) {
  establish_ecn();
  write_ect_segments(0, 10);
  // RFC 5681 3.2: three duplicate ACKs, fast retransmit.
  for (int i = 0; i < 3; ++i) ack_with_ece(0, false);
  const auto resent = take_emitted();
  ASSERT_FALSE(resent.empty());
  EXPECT_EQ(resent.front().seq, iss + 1);
  EXPECT_EQ(resent.front().ecn, ip_ecn::not_ect);  // a retransmission
  const std::uint32_t cwnd = conn().congestion().cwnd();
  // An echo now: the loss's reduction stands for it.
  ack_with_ece(0);
  EXPECT_EQ(conn().stats().ecn_reductions, 0u);
  EXPECT_GE(conn().congestion().cwnd(), cwnd);
  // Recovery ends; the next new data says CWR, so the peer stops echoing.
  ack_with_ece(10000, false);
  write_ect_segments(10, 1, true);
}

// SYN cookies (RFC 4987): what the SYN asked of ECN travels in the
// SYN-ACK's TSval, which the ACK echoes; without timestamps there is no
// room, and the SYN-ACK does not agree.
TEST_P(Ecn, ACookieWithoutTimestampsDoesNotAgreeToEcn_RFC3168_6_1_1) {
  config.ecn = ecn_mode::passive;
  listen_config.cookies = syn_cookie_mode::always;
  listen();
  send({.control = syn, .seq = rn, .options = {.mss = 1000}, .ece = true, .cwr = true});
  const auto synack = take_emitted();
  ASSERT_EQ(synack.size(), 1u);
  EXPECT_EQ(synack.front().control, syn);
  EXPECT_FALSE(synack.front().ece);
  send({.seq = rn + 1, .ack = synack.front().seq + 1});
  ASSERT_TRUE(has_conn());
  EXPECT_FALSE(conn().ecn_enabled());
}

TEST_P(Ecn, ACookieWithTimestampsBringsEcnBack_RFC3168_6_1_1) {
  config.ecn = ecn_mode::passive;
  config.timestamps = true;
  listen_config.cookies = syn_cookie_mode::always;
  listen();
  for (const bool asked : {true, false}) {
    const std::uint16_t peer = asked ? 40001 : 40002;
    send({.control = syn, .seq = rn, .options = {.mss = 1000, .timestamps = tcp_timestamps{777, 0}}, .peer = peer,
          .ece = asked, .cwr = asked});
    const auto synack = take_emitted();
    ASSERT_EQ(synack.size(), 1u);
    EXPECT_EQ(synack.front().ece, asked);
    ASSERT_TRUE(synack.front().options.timestamps.has_value());
    send({.seq = rn + 1, .ack = synack.front().seq + 1,
          .options = {.timestamps = tcp_timestamps{778, synack.front().options.timestamps->value}}, .peer = peer});
    ASSERT_TRUE(has_conn(peer));
    EXPECT_EQ(conn(peer).state(), tcp_state::established);
    EXPECT_EQ(conn(peer).ecn_enabled(), asked) << "peer " << peer;
  }
}

TCP_IN_BOTH_SEQUENCE_SPACES(Ecn);

}  // namespace
}  // namespace affine::stack::tcp::testing
