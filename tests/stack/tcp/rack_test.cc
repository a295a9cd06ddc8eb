// RACK (RFC 8985 6): a segment is lost once a segment sent after it was
// delivered and RACK.rtt + RACK.reo_wnd has passed since it left. The
// round trip is 10 ms; ten segments of 1000 bytes leave at t0 and the
// peer's ACKs for them arrive at t0 + 10 ms. Offsets are of our data.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

constexpr std::uint64_t rtt_ms = 10;

class Rack : public tcp_test {
 protected:
  Rack() { config.sack = true; }
  void enter() { sack_flight_out(10, rtt_ms); }
};

// 6.2 step 4: fewer than DupThresh segments SACKed and no reordering seen:
// reo_wnd = min_RTT / 4 = 2.5 ms. Step 5: [0, 1000) is lost at
// xmit_ts + RACK.rtt + reo_wnd, which the reorder timer waits for (step 6);
// the segments sent after the SACKed one are not suspects at all.
TEST_P(Rack, FewerThanDupThreshSackedWaitTheReorderingWindow_RFC8985_6_2) {
  enter();
  ack_data(0, {{1000, 2000}});
  ack_data(0, {{1000, 3000}});
  advance_ns(2'499'000);
  expect_nothing();
  EXPECT_EQ(conn().stats().sack_recoveries, 0u);
  advance_ns(1'000);
  expect_data(0);
  expect_nothing();
  EXPECT_EQ(conn().stats().reorder_timeouts, 1u);
  EXPECT_EQ(conn().stats().rack_marked_lost, 1u);
  EXPECT_EQ(conn().stats().sack_recoveries, 1u);
}

// 6.2 step 3: a segment delivered below the highest one delivered, never
// retransmitted, was reordered; from then on DupThresh SACKed segments no
// longer close the window.
TEST_P(Rack, ReorderingSeenKeepsTheWindowOpen_RFC8985_6_2_Step3) {
  enter();
  ack_data(0, {{2000, 3000}});
  ack_data(0, {{1000, 3000}});  // [1000, 2000) came late: reordering
  EXPECT_EQ(conn().stats().reordering_seen, 1u);
  ack_data(0, {{1000, 5000}});  // four SACKed above the hole
  expect_nothing();
  advance_ns(2'500'000);
  expect_data(0);
}

// 6.2 step 4: a D-SACK says the window was too small: it grows by
// min_RTT / 4 for the next round trip's losses.
TEST_P(Rack, ADsackWidensTheWindow_RFC8985_6_2_Step4) {
  enter();
  ack_data(2000, {{0, 1000}});  // the network delivered [0, 1000) twice
  ack_data(2000, {{3000, 4000}});
  advance_ns(4'999'000);        // 2 * 2.5 ms
  expect_nothing();
  advance_ns(1'000);
  expect_data(2000);
}

// The D-SACK round's end is a sequence number, compared modulo 2^32: it
// ends once SND.UNA passes it, whether or not another D-SACK comes, or
// 2^31 bytes later it would read as ahead again and the next D-SACK would
// widen nothing.
TEST_P(Rack, ADsackWidensTheWindowAgainAfterTwoGibibytes_RFC8985_6_2_Step4) {
  config.mss = 16000;  // four segments within the peer's 65535
  establish_sack(true, rtt_ms);
  app_write(32000);  // the initial window: two segments this size (RFC 6928)
  ASSERT_EQ(take_emitted().size(), 2u);
  advance(rtt_ms);
  ack_data(32000, {{0, 16000}});  // all, and a D-SACK: reo_wnd = 2 * min_RTT / 4
  const std::uint32_t far = (1u << 31) + (1u << 20);
  stream_acked(far, rtt_ms * ms);
  const std::uint32_t base = 32000 + far;
  app_write(64000);
  ASSERT_EQ(take_emitted().size(), 4u);
  advance(rtt_ms);
  ack_data(base + 16000, {{base, base + 16000}});  // a D-SACK again: 3 * min_RTT / 4
  ack_data(base + 16000, {{base + 48000, base + 64000}});
  advance_ns(7'499'000);
  expect_nothing();
  advance_ns(1'000);
  const auto resent = take_emitted();
  ASSERT_EQ(resent.size(), 1u);
  EXPECT_EQ(resent.front().seq, iss + 1 + base + 16000);
}

// 6.2: a retransmission is lost like any segment: new data sent after it
// is delivered a round trip later while it is not, so it goes again, with
// no timeout.
TEST_P(Rack, ALostRetransmissionIsFoundByTimeAndSentAgain_RFC8985_6_2) {
  enter();
  app_write(20000);
  ack_data(0, {{1000, 4000}});
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{0, 10000}));  // at t0 + 10 ms
  for (std::uint32_t k = 4; k < 10; ++k) ack_data(0, {{1000, 1000 * (k + 1)}});
  EXPECT_EQ(sent_offsets(), (std::vector<std::uint32_t>{11000, 12000, 13000}));
  EXPECT_EQ(conn().stats().lost_retransmits, 0u);
  advance(rtt_ms);
  ack_data(0, {{1000, 11000}});  // [10000, 11000) left after the retransmission, and arrived
  const auto sent = sent_offsets();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent.front(), 0u);
  EXPECT_EQ(conn().stats().lost_retransmits, 1u);
  EXPECT_EQ(conn().stats().retransmission_timeouts, 0u);
  ack_data(14000);
  take_emitted();
}

// 6.2 step 2: an ACK that may be for the original gives the retransmission
// no round trip: delivered sooner than min_RTT after it was resent.
TEST_P(Rack, AnAckTooSoonForTheRetransmissionSaysNothingOfIt_RFC8985_6_2_Step2) {
  enter();
  ack_data(0, {{1000, 4000}});
  expect_data(0);  // resent now; the original was only late
  advance(1);
  ack_data(10000);
  EXPECT_NE(conn().describe(now).find("rack[rtt=11000us"), std::string::npos) << conn().describe(now);
}

TCP_IN_BOTH_SEQUENCE_SPACES(Rack);

}  // namespace
}  // namespace affine::stack::tcp::testing
