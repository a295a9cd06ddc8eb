// Flow control: the peer's window and zero-window probing (RFC 9293
// 3.8.6, 3.8.6.1), our window and its updates, silly window avoidance on
// both sides (RFC 1122 4.2.3.3, 4.2.3.4).

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class FlowControl : public tcp_test {
 protected:
  // The peer's window shrinks to `window` (an ACK with nothing new).
  void peer_window(std::uint16_t window) { send({.seq = rn + 1, .ack = iss + 1, .window = window}); }
  // "abc" queued against a zero window, and the first probe.
  void first_probe() {
    establish();
    peer_window(0);
    app_write("abc");
    expect_nothing();
    EXPECT_EQ(conn().next_deadline(), now + 200 * ms);
    advance(200);
    expect({.seq = iss + 1, .ack = rn + 1, .payload = "a"});
  }
  // A 4000-byte receive buffer filled by the peer.
  void fill_receive_buffer() {
    config.recv_buffer = 4000;
    establish();
    for (std::uint32_t k = 0; k < 4; ++k)
      send({.seq = rn + 1 + 1000 * k, .ack = iss + 1, .payload = pattern(1000 * k, 1000)});
    expect({.seq = iss + 1, .ack = rn + 2001, .window = 2000});
    expect({.seq = iss + 1, .ack = rn + 4001, .window = 0});
  }
};

TEST_P(FlowControl, SenderStopsAtThePeersWindow_RFC9293_3_8_6) {
  establish();
  peer_window(2000);
  app_write(5000);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 1000)});
  expect({.seq = iss + 1001, .ack = rn + 1, .payload = pattern(1000, 1000)});
  expect_nothing();
}

TEST_P(FlowControl, ZeroWindowIsProbedWithOneOctetAfterAnRto_RFC9293_3_8_6_1) {
  first_probe();
  EXPECT_EQ(conn().stats().persist_probes, 1u);
}

TEST_P(FlowControl, ProbesBackOffWhileTheWindowStaysShut_RFC9293_3_8_6_1) {
  first_probe();
  for (std::uint64_t wait : {400, 800, 1600}) {
    peer_window(0);
    advance(wait - 1);
    expect_nothing();
    advance(1);
    expect({.seq = iss + 1, .ack = rn + 1, .payload = "a"});
  }
}

TEST_P(FlowControl, OpenWindowInTheAnswerResumesSending_RFC9293_3_8_6_1) {
  first_probe();
  peer_window(1000);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "abc", .psh = true});
  EXPECT_EQ(conn().next_deadline(), now + 200 * ms);  // the retransmission timer, not persist
}

TEST_P(FlowControl, AcceptedProbeOctetIsTakenOffTheQueue_RFC9293_3_8_6_1) {
  first_probe();
  send({.seq = rn + 1, .ack = iss + 2, .window = 0});
  advance(400);
  expect({.seq = iss + 2, .ack = rn + 1, .payload = "b"});
  EXPECT_EQ(conn().writable(), 64000u - 2);
}

TEST_P(FlowControl, ProbingGivesUpWhenNothingAnswers_RFC1122_4_2_2_17) {
  config.max_retransmissions = 2;
  first_probe();
  advance(400);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "a"});
  advance(800);
  expect_nothing();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::persist);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::timed_out));
}

TEST_P(FlowControl, ProbingNeverGivesUpWhileThePeerAnswers_RFC1122_4_2_2_17) {
  config.max_retransmissions = 2;
  first_probe();
  for (std::uint64_t wait : {400, 800, 1600, 3200}) {
    peer_window(0);
    advance(wait);
    expect({.seq = iss + 1, .ack = rn + 1, .payload = "a"});
  }
  EXPECT_EQ(conn().state(), tcp_state::established);
}

// An orphan (the application closed with data queued) is not probed for
// ever: max_orphan_probes answered probes, then a RST (Linux's
// tcp_orphan_retries). The window opening in between starts the count again.
TEST_P(FlowControl, AnOrphanBeforeAShutWindowGivesUpAfterItsProbes_RFC1122_4_2_2_17) {
  config.max_orphan_probes = 3;
  first_probe();  // probe 1 (before the close: not counted)
  app_close();
  expect_nothing();  // the FIN waits behind the data
  std::uint64_t wait = 400;
  for (int k = 0; k < 3; ++k, wait *= 2) {
    peer_window(0);
    advance(wait);
    expect({.seq = iss + 1, .ack = rn + 1, .payload = "a"});
  }
  peer_window(0);
  advance(wait);
  expect({.control = rst, .seq = iss + 2});  // SND.MAX: past the probes' octet
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::orphan_probes);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::timed_out));
  EXPECT_EQ(conn().stats().orphans_reset, 1u);
}

TEST_P(FlowControl, AnOrphansCountStartsAgainWhenTheWindowOpens_RFC1122_4_2_2_17) {
  config.max_orphan_probes = 2;
  first_probe();
  app_close();
  peer_window(0);
  advance(400);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "a"});  // orphan probe 1
  send({.seq = rn + 1, .ack = iss + 2, .window = 1});        // the octet taken, the window open
  send({.seq = rn + 1, .ack = iss + 2, .window = 0});        // and shut again
  take_emitted();
  for (std::uint64_t wait : {200, 400}) {
    advance(wait);
    expect({.seq = iss + 2, .ack = rn + 1, .payload = "b"});
    peer_window(0);
  }
  EXPECT_EQ(conn().state(), tcp_state::fin_wait_1);
}

TEST_P(FlowControl, FullReceiveBufferAdvertisesAZeroWindow_RFC9293_3_8_6) { fill_receive_buffer(); }

TEST_P(FlowControl, ZeroWindowProbeIsAnsweredWithoutTakingTheOctet_RFC9293_3_10_7_4) {
  fill_receive_buffer();
  send({.seq = rn + 4001, .ack = iss + 1, .payload = "z"});
  expect({.seq = iss + 1, .ack = rn + 4001, .window = 0});
  EXPECT_EQ(conn().readable(), 4000u);
}

TEST_P(FlowControl, ReadingLessThanAnMssKeepsTheWindowShut_RFC1122_4_2_3_3) {
  fill_receive_buffer();
  EXPECT_EQ(app_read(500), pattern(0, 500));
  expect_nothing();
  send({.seq = rn + 4001, .ack = iss + 1, .payload = "z"});
  expect({.seq = iss + 1, .ack = rn + 4001, .window = 0});
}

TEST_P(FlowControl, ReadingAnMssOpensTheWindowWithAnUpdate_RFC1122_4_2_3_3) {
  fill_receive_buffer();
  EXPECT_EQ(app_read(1000), pattern(0, 1000));
  expect({.seq = iss + 1, .ack = rn + 4001, .window = 1000});
}

TEST_P(FlowControl, DataPastTheWindowIsCutOff_RFC9293_3_10_7_4) {
  config.recv_buffer = 4000;
  establish();
  send({.seq = rn + 1, .ack = iss + 1, .payload = pattern(0, 5000)});
  expect({.seq = iss + 1, .ack = rn + 4001, .window = 0});
  EXPECT_EQ(app_read(), pattern(0, 4000));
  expect({.seq = iss + 1, .ack = rn + 4001, .window = 4000});  // the window update
}

TEST_P(FlowControl, RightEdgeNeverMovesLeft_RFC9293_3_8_6_2_2) {
  config.recv_buffer = 4000;
  establish();
  send({.seq = rn + 1, .ack = iss + 1, .payload = pattern(0, 2000)});
  expect({.seq = iss + 1, .ack = rn + 2001, .window = 2000});  // edge rn + 4001
  EXPECT_EQ(app_read(500), pattern(0, 500));
  send({.seq = rn + 2001, .ack = iss + 1, .payload = pattern(2000, 1000)});
  send({.seq = rn + 3001, .ack = iss + 1, .payload = pattern(3000, 1000)});
  // 500 bytes freed move the edge by less than an MSS: it stays (RFC 1122 4.2.3.3).
  expect({.seq = iss + 1, .ack = rn + 4001, .window = 0});
}

TEST_P(FlowControl, SenderHoldsASliverOfWindow_RFC1122_4_2_3_4) {
  establish();
  conn().set_no_delay(true);
  peer_window(4000);
  app_write(5000);
  for (std::uint32_t k = 0; k < 4; ++k)
    expect({.seq = iss + 1 + 1000 * k, .ack = rn + 1, .payload = pattern(1000 * k, 1000)});
  send({.seq = rn + 1, .ack = iss + 1001, .window = 3300});  // 300 usable
  expect_nothing();
  send({.seq = rn + 1, .ack = iss + 4001, .window = 4000});
  expect({.seq = iss + 4001, .ack = rn + 1, .payload = pattern(4000, 1000), .psh = true});
}

TEST_P(FlowControl, OverrideTimerSendsTheSliverEventually_RFC1122_4_2_3_4) {
  establish();
  peer_window(300);
  app_write(1000);
  expect_nothing();
  advance(200);
  expect({.seq = iss + 1, .ack = rn + 1, .payload = pattern(0, 300)});
}

TEST_P(FlowControl, SegmentWrappingTheSendRingGoesOutWhole) {
  config.send_buffer = 2500;
  establish();
  write_segments(2);
  send({.seq = rn + 1, .ack = iss + 2001});
  app_write(1000);  // bytes 2000..2499 at the end of the ring, 2500..2999 at its start
  expect({.seq = iss + 2001, .ack = rn + 1, .payload = pattern(2000, 1000), .psh = true});
}

TEST_P(FlowControl, OutOfOrderDataWrappingTheReceiveRingIsKept_RFC9293_3_10_7_4) {
  config.recv_buffer = 4000;
  establish();
  for (std::uint32_t k = 0; k < 3; ++k)
    send({.seq = rn + 1 + 1000 * k, .ack = iss + 1, .payload = pattern(1000 * k, 1000)});
  expect({.seq = iss + 1, .ack = rn + 2001, .window = 2000});
  EXPECT_EQ(app_read(), pattern(0, 3000));
  expect({.seq = iss + 1, .ack = rn + 3001, .window = 4000});  // the window update
  send({.seq = rn + 3501, .ack = iss + 1, .payload = pattern(3500, 2000)});
  expect({.seq = iss + 1, .ack = rn + 3001, .window = 4000});
  send({.seq = rn + 3001, .ack = iss + 1, .payload = pattern(3000, 500)});
  expect({.seq = iss + 1, .ack = rn + 5501, .window = 1500});
  EXPECT_EQ(app_read(), pattern(3000, 2500));
  expect({.seq = iss + 1, .ack = rn + 5501, .window = 4000});
}

TEST_P(FlowControl, OutOfOrderRangesAreBounded) {
  config.max_ooo_ranges = 2;
  establish();
  for (std::uint32_t k = 1; k <= 3; ++k) {
    send({.seq = rn + 1 + 2000 * k, .ack = iss + 1, .payload = pattern(2000 * k, 1000)});
    expect({.seq = iss + 1, .ack = rn + 1});
  }
  EXPECT_EQ(conn().stats().ooo_ranges_full, 1u);
  // The hole is filled: the two kept ranges join, the third is missing.
  send({.seq = rn + 1, .ack = iss + 1, .payload = pattern(0, 2000)});
  expect({.seq = iss + 1, .ack = rn + 3001, .window = 61000});
  send({.seq = rn + 3001, .ack = iss + 1, .payload = pattern(3000, 1000)});
  expect({.seq = iss + 1, .ack = rn + 5001, .window = 59000});
}

TCP_IN_BOTH_SEQUENCE_SPACES(FlowControl);

}  // namespace
}  // namespace affine::stack::tcp::testing
