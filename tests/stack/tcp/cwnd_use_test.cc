// The congestion window grows only while it limits sending (RFC 9438 5.8,
// RFC 7661; Linux's tcp_is_cwnd_limited): full in the last round trip, or,
// in slow start, below twice that round's largest flight. NewReno, MSS
// 1000, an initial window of 10 segments.

#include "stack/tcp/cubic.hh"
#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class CwndUse : public tcp_test {
 protected:
  // `count` segments written from `offset` and sent; the peer acknowledges them all.
  void round(std::uint32_t offset, std::uint32_t count) {
    app_write(std::size_t(count) * 1000);
    EXPECT_EQ(take_emitted().size(), count);
    send({.seq = rn + 1, .ack = iss + 1 + offset + count * 1000});
  }
};

// A request/response sender: one segment a round trip, fifty times. Before,
// each ACK added a segment in slow start (a window of 60 for a flight of 1).
TEST_P(CwndUse, AnApplicationLimitedSenderKeepsItsWindow_RFC9438_5_8) {
  establish();
  for (std::uint32_t k = 0; k < 50; ++k) round(1000 * k, 1);
  EXPECT_EQ(conn().congestion().cwnd(), 10000u);
}

// A flight of 6 in a window of 10: slow start may reach twice the flight
// (12), and no further while the flights stay at 6.
TEST_P(CwndUse, SlowStartGrowsToTwiceTheLargestFlight_RFC7661_4_3) {
  establish();
  round(0, 6);
  EXPECT_EQ(conn().congestion().cwnd(), 12000u);  // + min(6000, 2 SMSS) (RFC 3465)
  round(6000, 6);
  round(12000, 6);
  EXPECT_EQ(conn().congestion().cwnd(), 12000u);
}

// A full window grows on every ACK of the round, as slow start says.
TEST_P(CwndUse, AFullWindowGrows_RFC5681_3_1) {
  establish();
  app_write(20000);
  EXPECT_EQ(take_emitted().size(), 10u);  // the window, full
  send({.seq = rn + 1, .ack = iss + 1 + 1000});
  EXPECT_EQ(conn().congestion().cwnd(), 11000u);
  take_emitted();  // what the larger window let out
}

// Congestion avoidance (after a timeout: ssthresh 2000) has no such
// allowance: a flight of one segment a round leaves the window as it is,
// however many bytes are acknowledged; full windows grow it (RFC 5681
// 3.1's SMSS a window, counted in bytes).
TEST_P(CwndUse, InCongestionAvoidanceOnlyAFullWindowGrows_RFC9438_5_8) {
  establish();
  app_write(4000);
  EXPECT_EQ(take_emitted().size(), 4u);
  advance_ns(conn().rto().rto_ns());
  EXPECT_EQ(take_emitted().size(), 1u);  // the first segment again, cwnd 1 SMSS
  send({.seq = rn + 1, .ack = iss + 1 + 4000});
  const std::uint32_t cwnd = conn().congestion().cwnd();
  ASSERT_GE(cwnd, conn().congestion().ssthresh());
  std::uint32_t sent = 4000;
  for (int k = 0; k < 20; ++k, sent += 1000) round(sent, 1);
  EXPECT_EQ(conn().congestion().cwnd(), cwnd);
  // Four windows' worth, each flight acknowledged whole.
  app_write(4 * cwnd);
  for (std::uint32_t left = 4 * cwnd; left > 0;) {
    std::uint32_t flight = 0;
    for (const seg& s : take_emitted()) flight += std::uint32_t(s.payload.size());
    ASSERT_GT(flight, 0u);
    left -= flight;
    sent += flight;
    send({.seq = rn + 1, .ack = iss + 1 + sent});
  }
  EXPECT_GT(conn().congestion().cwnd(), cwnd);
}

// CUBIC's t (RFC 9438 5.8) leaves out the time the sender had nothing in
// flight and nothing to send: once its last data was acknowledged, the
// quiet spell until the next write moves the epoch's start by the time
// since that data was sent (Linux's CA_EVENT_TX_START).
TEST_P(CwndUse, CubicLeavesQuietTimeOutOfItsCurve_RFC9438_5_8) {
  config.congestion = congestion_algorithm::cubic;
  establish();
  const auto& cc = dynamic_cast<const cubic&>(conn().congestion());
  std::uint32_t sent = 0;
  const auto send_all = [&](std::size_t bytes) {
    app_write(bytes);
    for (const seg& s : take_emitted()) sent += std::uint32_t(s.payload.size());
  };
  const auto ack_all = [&] { send({.seq = rn + 1, .ack = iss + 1 + sent}); };
  const auto window = [&] { return cc.cwnd() / 1000 * 1000; };  // whole segments: none held back
  // A timeout (ssthresh 0.7 of the window), then full windows, each
  // acknowledged whole, through slow start into congestion avoidance.
  send_all(4000);
  advance_ns(conn().rto().rto_ns());
  EXPECT_EQ(take_emitted().size(), 1u);
  ack_all();
  for (int round = 0; round < 20 && !cc.epoch_open(); ++round) {
    send_all(window());
    ack_all();
  }
  ASSERT_TRUE(cc.epoch_open());
  const std::uint64_t epoch = cc.epoch_start_ns();
  // A window; 10 ms on, half of it acknowledged and one more segment sent;
  // 10 ms on, all of it acknowledged; then 50 ms with nothing to send.
  send_all(window());
  advance_ns(10'000'000);
  send({.seq = rn + 1, .ack = iss + 1 + sent - window() / 2});
  send_all(1000);
  const std::uint64_t last_send = now;
  advance_ns(10'000'000);
  ack_all();
  EXPECT_EQ(cc.epoch_start_ns(), epoch);  // data was in flight until now
  advance_ns(50'000'000);
  send_all(1000);
  EXPECT_EQ(cc.epoch_start_ns(), epoch + (now - last_send));
  EXPECT_LT(cc.epoch_start_ns(), now);
}

TCP_IN_BOTH_SEQUENCE_SPACES(CwndUse);

}  // namespace
}  // namespace affine::stack::tcp::testing
