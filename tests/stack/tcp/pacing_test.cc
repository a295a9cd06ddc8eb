// Pacing (pacing.cc, tcp.pacing). A window leaves over the round trip at
// twice the window per SRTT in slow start, in bursts of a millisecond of
// that rate; the initial window, and a window that is less than a
// millisecond of its rate (a LAN), leave at once. MSS 1000, an initial
// window of 10 segments, the SYN's round trip the only RTT sample: SRTT is
// that round trip (RFC 6298 2.2).

#include <algorithm>
#include <iterator>
#include <vector>

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Pacing : public tcp_test {
 protected:
  Pacing() {
    config.pacing = true;
    config.sack = true;
  }

  // Established with a round trip of `rtt_ms`, the initial window sent
  // and, a round trip later, acknowledged whole by one ACK (slow start
  // with RFC 3465's L = 2: a window of 12); `more` segments more queued.
  void first_window_acked(std::uint64_t rtt_ms, std::uint32_t more) {
    establish_sack(true, rtt_ms);
    app_write(std::size_t(10 + more) * 1000);
    initial_ = sent_offsets().size();
    advance(rtt_ms);
    ack_at_ = now;
    ack_data(10'000);
  }
  // When each data segment left after the ACK, in ns from it, over
  // `span_ms` in steps of a tenth of a millisecond.
  std::vector<std::uint64_t> departures(std::uint64_t span_ms) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t t = 0; t <= span_ms * 10; ++t) {
      for (std::size_t n = sent_offsets().size(); n > 0; --n) out.push_back(now - ack_at_);
      advance_ns(100'000);
    }
    return out;
  }

  // At a round trip of `rtt_ms`, the window the first ACK opens (12
  // segments) all leaves with it, and nothing is held for a round trip.
  void expect_window_at_once(std::uint64_t rtt_ms) {
    first_window_acked(rtt_ms, 30);
    const std::vector<std::uint64_t> at = departures(rtt_ms);
    ASSERT_EQ(at.size(), 12u);
    EXPECT_EQ(std::ranges::count(at, 0u), 12);
    EXPECT_EQ(conn().stats().pacing_holds, 0u);
  }

  std::size_t initial_ = 0;
  std::uint64_t ack_at_ = 0;
};

// The initial window is not paced (Linux: data_segs_out >= 10).
TEST_P(Pacing, TheInitialWindowLeavesAtOnce) {
  establish_sack(true, 20);
  app_write(10'000);
  EXPECT_EQ(sent_offsets().size(), 10u);
}

// 20 ms round trip, cwnd 12 after the ACK: 2 x 12000 B / 20 ms = 1.2 MB/s,
// a segment each 0.83 ms; a burst is two segments' time (1.67 ms, more
// than a millisecond). Five go at once: a burst saved up over the quiet
// round trip, and one (until the next would leave more than a burst from
// now). Then three each 2.5 ms: the window's 12 segments over 7.5 ms. At
// Linux's ratio after slow start (1.2) the last would leave at 12.5 ms;
// unpaced, all 12 leave with the ACK.
TEST_P(Pacing, AWindowIsSpreadOverTheRoundTripInSlowStart) {
  first_window_acked(20, 30);
  ASSERT_EQ(initial_, 10u);
  EXPECT_EQ(conn().congestion().cwnd(), 12'000u);
  const std::vector<std::uint64_t> at = departures(30);
  ASSERT_EQ(at.size(), 12u);  // the window, and no more before its ACKs
  EXPECT_EQ(std::ranges::count(at, 0u), 5);
  EXPECT_GE(at.back(), 7'000'000u);
  EXPECT_LE(at.back(), 8'000'000u);
  for (std::size_t i = 5 + 3; i < at.size(); ++i) EXPECT_GE(at[i] - at[i - 3], 2'400'000u) << i;
  EXPECT_GT(conn().stats().pacing_holds, 0u);
}

// The same window with pacing off: all of it at once.
TEST_P(Pacing, UnpacedTheWindowLeavesWithTheAck) {
  config.pacing = false;
  expect_window_at_once(20);
}

// 1 ms round trip: 24 MB/s, and the 12-segment window is half a
// millisecond of it: nothing waits.
TEST_P(Pacing, AWindowUnderAMillisecondOfItsRateLeavesAtOnce) { expect_window_at_once(1); }

// A burst is at most 64 KiB's time at the rate (Linux's GSO bound). 1 ms
// round trip, the peer's window 8 MiB (scale 7); each segment
// acknowledged on its own a round trip after it left, all at one instant:
// slow start doubles the window each round, 12, 24, 48, 96. A window of
// 96 acknowledged so opens 192 segments, and a millisecond of the rate
// (2 x 192000 B / 1 ms once all are in) is 384 KB: about two bursts of
// 64 KiB (one saved up over the round trip), 131 segments, leave at that
// instant (138: each burst is reckoned at the rate of its moment, and the
// rate grows with the window over those ACKs). Without the bound all 192
// would.
TEST_P(Pacing, ABurstIsAtMost64KiB) {
  config.send_buffer = 1'000'000;
  config.window_scaling = true;
  open();
  take_emitted();
  advance(1);
  send({.control = syn, .seq = rn, .ack = iss + 1,
        .options = {.mss = 1000, .window_scale = 7, .sack_permitted = true}});
  take_emitted();
  app_write(510'000);
  ASSERT_EQ(sent_offsets().size(), 10u);
  advance(1);
  ack_data(10'000);
  std::vector<std::size_t> at_once;
  for (int round = 0; round < 5; ++round) {
    std::vector<std::uint32_t> out = sent_offsets();  // with the ACKs
    at_once.push_back(out.size());
    advance(1);
    std::ranges::copy(sent_offsets(), std::back_inserter(out));  // held, sent since
    for (const std::uint32_t offset : out) ack_data(offset + 1000);
  }
  ASSERT_EQ(at_once.size(), 5u);
  EXPECT_EQ(at_once[0], 12u);
  EXPECT_EQ(at_once[1], 24u);
  EXPECT_EQ(at_once[2], 48u);
  EXPECT_EQ(at_once[3], 96u);
  EXPECT_GE(at_once[4], 96u);
  EXPECT_LE(at_once[4], 140u);
  take_emitted();
}

// A held connection wakes when the rate lets its next segment go: after
// the first five (above), at 2.5 ms. The
// other timers are further off: the loss probe at two round trips, the
// retransmission at the RTO.
TEST_P(Pacing, AHeldWindowWaitsOnThePacingTimer) {
  first_window_acked(20, 30);
  EXPECT_EQ(sent_offsets().size(), 5u);
  EXPECT_GE(conn().next_deadline(), now + 2'400'000);
  EXPECT_LE(conn().next_deadline(), now + 2'500'000);
}

// Held with nothing in flight (the ACKs came sooner than SRTT said): the
// pacing deadline sends the data, and neither the persist timer is armed
// nor the retransmission timer stopped (RFC 9293 3.8.6.1's persist timer
// is for a window that holds data back, which this is not; arming it
// would also mark the window shut for the user timeout).
TEST_P(Pacing, HeldWithNothingInFlightIsNotAZeroWindow) {
  first_window_acked(20, 30);
  EXPECT_EQ(sent_offsets().size(), 5u);
  advance_ns(100'000);
  ack_data(15'000);
  EXPECT_TRUE(sent_offsets().empty());  // held: the rate's next time is 2.5 ms after the first ACK
  EXPECT_LT(conn().next_deadline(), now + 3'000'000);
  const std::string held = conn().describe(now);
  EXPECT_NE(held.find(" persist=- "), std::string::npos) << held;
  advance(400);
  EXPECT_EQ(conn().stats().persist_probes, 0u);
  take_emitted();
}

// Held data that an ACK lets go before the pacing deadline leaves no
// wakeup behind: with nothing more to send, the next deadline is the loss
// probe's (two round trips), not the pacing one (2.5 ms).
TEST_P(Pacing, NoWakeupIsLeftOnceTheHeldDataIsSent) {
  first_window_acked(20, 6);
  EXPECT_EQ(sent_offsets().size(), 5u);  // the sixth held
  advance_ns(1'500'000);
  ack_data(13'000);
  EXPECT_EQ(sent_offsets().size(), 1u);
  EXPECT_GT(conn().next_deadline(), now + 10'000'000);
}

TCP_IN_BOTH_SEQUENCE_SPACES(Pacing);

}  // namespace
}  // namespace affine::stack::tcp::testing
