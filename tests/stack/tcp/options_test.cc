// Options: MSS (RFC 9293 3.7.1), window scale and timestamps with PAWS
// (RFC 7323), settled by the two SYNs.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Options : public tcp_test {
 protected:
  Options() {
    config.window_scaling = true;
    config.timestamps = true;
    config.recv_buffer = 256 * 1024;  // window scale 3
    config.recv_buffer_max = 0;       // for a buffer that does not grow (buffer_tuning_test.cc)
  }
  // Our SYN, answered with a SYN,ACK carrying `peer` options (a timestamp
  // option there echoes our SYN's).
  void handshake(tcp_options peer, std::optional<std::uint16_t> window = std::nullopt) {
    open();
    syn_tsval = tsval();
    tcp_options mine{.mss = 1000};
    if (config.window_scaling) mine.window_scale = 3;
    if (config.timestamps) mine.timestamps = tcp_timestamps{syn_tsval, 0};
    expect({.control = syn, .seq = iss, .options = mine});
    if (peer.timestamps) peer.timestamps->echo = syn_tsval;
    send({.control = syn, .seq = rn, .ack = iss + 1, .window = window, .options = peer});
  }
  // Both timestamps and window scale negotiated; TS.Recent = 500.
  void establish_with_timestamps() {
    handshake({.mss = 1000, .timestamps = tcp_timestamps{500, 0}});
    expect({.seq = iss + 1, .ack = rn + 1, .options = ts(tsval(), 500)});
  }
  tcp_options ts(std::uint32_t value, std::uint32_t echo) const { return {.timestamps = tcp_timestamps{value, echo}}; }

  std::uint32_t syn_tsval = 0;
};

TEST_P(Options, SynOffersMssWindowScaleAndTimestamps_RFC7323_1_3) {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000, .window_scale = 3,
                                                 .timestamps = tcp_timestamps{tsval(), 0}}});
}

TEST_P(Options, WindowScaleNeedsBothSyns_RFC7323_2_2) {
  handshake({.mss = 1000});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().recv_window_scale(), 0);
  EXPECT_EQ(conn().send_window_scale(), 0);
  EXPECT_FALSE(conn().timestamps_enabled());
  EXPECT_EQ(conn().send_mss(), 1000u);
}

TEST_P(Options, ScaledWindowsBothWays_RFC7323_2_3) {
  handshake({.mss = 1000, .window_scale = 2}, 1000);
  expect({.seq = iss + 1, .ack = rn + 1, .window = 32768});  // 256 KiB >> 3
  EXPECT_EQ(conn().send_window(), 1000u);                    // the SYN's window is not scaled
  send({.seq = rn + 1, .ack = iss + 1, .window = 1000});
  EXPECT_EQ(conn().send_window(), 4000u);
}

TEST_P(Options, ShiftAbove14IsTakenAs14_RFC7323_2_3) {
  handshake({.mss = 1000, .window_scale = 15});
  expect({.seq = iss + 1, .ack = rn + 1, .window = 32768});
  EXPECT_EQ(conn().send_window_scale(), 14);
  EXPECT_EQ(conn().stats().window_scale_clamped, 1u);
}

TEST_P(Options, SynAckOffersWindowScaleOnlyIfTheSynDid_RFC7323_2_2) {
  listen();
  send({.control = syn, .seq = rn, .options = {.mss = 1000, .window_scale = 7}});
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000, .window_scale = 3}});
  send({.control = syn, .seq = rn + 50, .options = {.mss = 1000}, .peer = 40001});
  expect({.control = syn, .seq = iss_for(40001), .ack = rn + 51, .options = {.mss = 1000}, .peer = 40001});
}

TEST_P(Options, SynAckEchoesTheSynsTimestamp_RFC7323_3_2) {
  listen();
  send({.control = syn, .seq = rn, .options = {.mss = 1000, .timestamps = tcp_timestamps{500, 0}}});
  expect({.control = syn, .seq = iss, .ack = rn + 1,
          .options = {.mss = 1000, .timestamps = tcp_timestamps{tsval(), 500}}});
}

TEST_P(Options, TimestampsGoOnEverySegmentAndShrinkTheMss_RFC7323_3_2) {
  establish_with_timestamps();
  EXPECT_TRUE(conn().timestamps_enabled());
  EXPECT_EQ(conn().send_mss(), 988u);
  app_write("x");
  expect({.seq = iss + 1, .ack = rn + 1, .options = ts(tsval(), 500), .payload = "x", .psh = true});
}

TEST_P(Options, SegmentWithoutTimestampIsDropped_RFC7323_3_2) {
  establish_with_timestamps();
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1, .payload = "x"}), drop_reason::timestamp_missing);
  expect_nothing();
  EXPECT_EQ(conn().readable(), 0u);
}

TEST_P(Options, RstWithoutTimestampIsAccepted_RFC7323_3_2) {
  establish_with_timestamps();
  send({.control = rst, .seq = rn + 1});
  EXPECT_EQ(conn().state(), tcp_state::closed);
}

TEST_P(Options, OldTimestampIsRejectedByPawsWithAnAck_RFC7323_5_3) {
  establish_with_timestamps();
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1, .options = ts(499, 1), .payload = "x"}), drop_reason::paws);
  expect({.seq = iss + 1, .ack = rn + 1, .options = ts(tsval(), 500)});
  EXPECT_EQ(conn().readable(), 0u);
}

// RFC 6191 1 (PAWS needs it): the TSvals a connection sends never go
// back. Two cores may output one connection, each with its own reading of
// the clock, and the RX path reads it once a burst: a segment built from a
// reading older than one used before takes that one's TSval, not an older
// value the peer's PAWS would drop behind the first segment. An echo of
// it read at the older time still gives an RTT sample.
TEST_P(Options, OurTimestampsNeverGoBackWhenACallersClockIsBehind_RFC6191) {
  establish_with_timestamps();
  advance(10);
  app_write("a");
  const std::uint32_t first = tsval();
  expect({.seq = iss + 1, .ack = rn + 1, .options = ts(first, 500), .payload = "a", .psh = true});
  advance(20);
  send({.seq = rn + 1, .ack = iss + 2, .options = ts(501, first)});  // an RTT sample: 20 ms
  app_write("b");
  const std::uint32_t second = tsval();
  expect({.seq = iss + 2, .ack = rn + 1, .options = ts(second, 501), .payload = "b", .psh = true});
  now -= 3'000'000;  // another caller's reading, 3 ms older
  const std::uint64_t srtt = conn().rto().srtt_ns();
  send({.seq = rn + 1, .ack = iss + 3, .options = ts(502, second)});
  EXPECT_LT(conn().rto().srtt_ns(), srtt);  // a sample under a tick, not none
  app_write("c");
  expect({.seq = iss + 3, .ack = rn + 1, .options = ts(second, 502), .payload = "c", .psh = true});
}

TEST_P(Options, PawsComparesTimestampsModulo2To32_RFC7323_5_2) {
  establish_with_timestamps();
  // 500 - 0x80000000 wraps to a value "after" 500: it is newer, not older.
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1, .options = ts(500u + 0x7fffffffu, 1), .payload = "x"}),
            drop_reason::none);
  EXPECT_EQ(conn().readable(), 1u);
}

TEST_P(Options, TsRecentFollowsInOrderSegments_RFC7323_4_3) {
  establish_with_timestamps();
  send({.seq = rn + 1, .ack = iss + 1, .options = ts(600, 1), .payload = "x"});
  advance(40);
  expect({.seq = iss + 1, .ack = rn + 2, .window = 65534, .options = ts(tsval(), 600)});
}

TEST_P(Options, TsRecentIgnoresSegmentsPastLastAckSent_RFC7323_4_3) {
  establish_with_timestamps();
  send({.seq = rn + 101, .ack = iss + 1, .options = ts(700, 1), .payload = "x"});
  expect({.seq = iss + 1, .ack = rn + 1, .options = ts(tsval(), 500)});
}

TEST_P(Options, PawsForgetsTsRecentAfter24IdleDays_RFC7323_5_5) {
  establish_with_timestamps();
  advance(25ull * 24 * 3600 * 1000);
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1, .options = ts(400, 1), .payload = "x"}), drop_reason::none);
  EXPECT_EQ(conn().readable(), 1u);
}

// TS.Recent recorded at a later reading of the clock than the caller's
// (another core's, a moment before) is fresh, not 24 days old: PAWS
// still drops an older TSval, and TS.Recent does not go back to it.
TEST_P(Options, PawsHoldsWhenACallersClockIsBehindTsRecents_RFC7323_5_3) {
  establish_with_timestamps();
  advance(10);
  send({.seq = rn + 1, .ack = iss + 1, .options = ts(510, 1), .payload = "x"});
  take_emitted();  // its ACK
  now -= 3'000'000;  // another caller's reading, 3 ms older
  EXPECT_EQ(send({.seq = rn + 2, .ack = iss + 1, .options = ts(505, 1), .payload = "y"}), drop_reason::paws);
  EXPECT_EQ(conn().readable(), 1u);
  const auto reply = take_emitted();  // "send an acknowledgment in reply"
  ASSERT_EQ(reply.size(), 1u);
  ASSERT_TRUE(reply[0].options.timestamps);
  EXPECT_EQ(reply[0].options.timestamps->echo, 510u);
}

TEST_P(Options, RetransmissionIsTimedByItsEcho_RFC7323_4_1) {
  establish_with_timestamps();
  app_write("x");
  expect({.seq = iss + 1, .ack = rn + 1, .options = ts(tsval(), 500), .payload = "x", .psh = true});
  advance(200);
  const std::uint32_t resent = tsval();
  expect({.seq = iss + 1, .ack = rn + 1, .options = ts(resent, 500), .payload = "x", .psh = true});
  EXPECT_EQ(conn().rto().backoff_count(), 1u);
  advance(10);
  send({.seq = rn + 1, .ack = iss + 2, .options = ts(501, resent)});
  EXPECT_EQ(conn().rto().backoff_count(), 0u);  // a valid sample, unlike Karn without timestamps
}

TEST_P(Options, PeerMssAboveOursIsCappedByOurs_RFC9293_3_7_1) {
  config.timestamps = false;
  handshake({.mss = 9000});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().send_mss(), 1000u);
}

TEST_P(Options, PeerMssBelowOursCutsOurSegments_RFC9293_3_7_1) {
  config.timestamps = false;
  config.window_scaling = false;
  open();
  expect({.control = syn, .seq = iss, .window = 65535, .options = {.mss = 1000}});
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 500}});
  expect({.seq = iss + 1, .ack = rn + 1});
  app_write(1200);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 500)});
  expect({.seq = iss + 501, .ack = rn + 1, .payload = pattern(500, 500)});
  expect_nothing();
}

// CVE-2019-11479: a peer announcing a tiny MSS would make us send its data
// in pieces of a few bytes, each a segment's work; 48 is the floor, as
// Linux's tcp_min_snd_mss, and the raise is counted.
TEST_P(Options, ATinyPeerMssIsRaisedToTheFloorAndCounted) {
  config.timestamps = false;
  handshake({.mss = 8});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().send_mss(), 48u);
  EXPECT_EQ(conn().stats().peer_mss_raised, 1u);
}

TCP_IN_BOTH_SEQUENCE_SPACES(Options);

}  // namespace
}  // namespace affine::stack::tcp::testing
