// Keepalive (RFC 1122 4.2.3.6): off by default; when on, an idle connection
// is probed and reset when the probes go unanswered.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Keepalive : public tcp_test {
 protected:
  static constexpr keepalive_config on{.enabled = true, .idle_ns = 10'000 * ms, .interval_ns = 1'000 * ms,
                                       .count = 3};
};

TEST_P(Keepalive, OffByDefault_RFC1122_4_2_3_6) {
  establish();
  EXPECT_EQ(conn().next_deadline(), no_deadline);
  advance(3 * 3600 * 1000);
  expect_nothing();
}

TEST_P(Keepalive, FirstProbeAfterTheIdleTime_RFC1122_4_2_3_6) {
  establish();
  conn().set_keepalive(on);
  advance(9999);
  expect_nothing();
  advance(1);
  expect({.seq = iss, .ack = rn + 1});  // SEG.SEQ = SND.NXT - 1, no data
  EXPECT_EQ(conn().stats().keepalive_probes, 1u);
}

TEST_P(Keepalive, AnsweredProbeRestartsTheIdleWait_RFC1122_4_2_3_6) {
  establish();
  conn().set_keepalive(on);
  advance(10000);
  expect({.seq = iss, .ack = rn + 1});
  send({.seq = rn + 1, .ack = iss + 1});
  advance(9999);
  expect_nothing();
  advance(1);
  expect({.seq = iss, .ack = rn + 1});
}

TEST_P(Keepalive, UnansweredProbesResetTheConnection_RFC1122_4_2_3_6) {
  establish();
  conn().set_keepalive(on);
  advance(10000);
  expect({.seq = iss, .ack = rn + 1});
  advance(1000);
  expect({.seq = iss, .ack = rn + 1});
  advance(1000);
  expect({.seq = iss, .ack = rn + 1});
  advance(1000);
  expect({.control = rst, .seq = iss + 1});
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::keepalive);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::timed_out));
}

TEST_P(Keepalive, OnFromTheConfigurationStartsWithTheConnection_RFC1122_4_2_3_6) {
  config.keepalive = on;
  establish();
  EXPECT_EQ(conn().next_deadline(), now + 10'000 * ms);
}

TEST_P(Keepalive, TrafficPostponesTheProbe_RFC1122_4_2_3_6) {
  establish();
  conn().set_keepalive(on);
  advance(5000);
  send({.seq = rn + 1, .ack = iss + 1, .payload = "x"});
  advance(40);
  expect({.seq = iss + 1, .ack = rn + 2, .window = 63999});
  advance(9959);
  expect_nothing();
  advance(1);
  expect({.seq = iss, .ack = rn + 2, .window = 63999});
}

// What an idle connection costs (issue 19): its send and receive queues
// take storage with their first byte, not with the connection, so a
// connection that has carried nothing holds a timer and no buffers.
TEST_P(Keepalive, AnIdleConnectionHoldsNoQueueStorageUntilItsFirstByte) {
  establish();
  conn().set_keepalive(on);
  advance(5000);
  EXPECT_EQ(ring_buffer::allocated_bytes(), 0u);
  send({.seq = rn + 1, .ack = iss + 1, .payload = "x"});
  EXPECT_EQ(ring_buffer::allocated_bytes(), config.recv_buffer);
  advance(40);
  expect({.seq = iss + 1, .ack = rn + 2, .window = 63999});
}

TEST_P(Keepalive, PeersProbeIsAnsweredWithAnAck_RFC1122_4_2_3_6) {
  establish();
  EXPECT_EQ(send({.seq = rn, .ack = iss + 1}), drop_reason::out_of_window);
  expect({.seq = iss + 1, .ack = rn + 1});
}

TEST_P(Keepalive, TurningItOffStopsTheTimer_RFC1122_4_2_3_6) {
  establish();
  conn().set_keepalive(on);
  conn().set_keepalive({});
  EXPECT_EQ(conn().next_deadline(), no_deadline);
}

TCP_IN_BOTH_SEQUENCE_SPACES(Keepalive);

}  // namespace
}  // namespace affine::stack::tcp::testing
