// Nagle (RFC 1122 4.2.3.4, RFC 896) with the no-delay option, and delayed
// ACKs (RFC 1122 4.2.3.2).

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class NagleDelayedAck : public tcp_test {};

TEST_P(NagleDelayedAck, SmallWritesWaitWhileDataIsInFlight_RFC1122_4_2_3_4) {
  establish();
  app_write("a");
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "a", .psh = true});
  app_write("b");
  app_write("c");
  expect_nothing();
  send({.seq = rn + 1, .ack = iss + 2});
  expect({.seq = iss + 2, .ack = rn + 1, .payload = "bc", .psh = true});
}

TEST_P(NagleDelayedAck, NoDelaySendsEverySmallWrite_RFC1122_4_2_3_4) {
  establish();
  conn().set_no_delay(true);
  app_write("a");
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "a", .psh = true});
  app_write("b");
  expect({.seq = iss + 2, .ack = rn + 1, .payload = "b", .psh = true});
}

TEST_P(NagleDelayedAck, NoDelayFromTheConfiguration_RFC1122_4_2_3_4) {
  config.no_delay = true;
  establish();
  app_write("a");
  app_write("b");
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "a", .psh = true});
  expect({.seq = iss + 2, .ack = rn + 1, .payload = "b", .psh = true});
}

TEST_P(NagleDelayedAck, FullSegmentGoesDespiteDataInFlight_RFC1122_4_2_3_4) {
  establish();
  app_write("a");
  expect({.seq = iss + 1, .ack = rn + 1, .payload = "a", .psh = true});
  app_write(1000);
  expect({.seq = iss + 2, .ack = rn + 1, .payload = pattern(1, 1000), .psh = true});
}

TEST_P(NagleDelayedAck, AckRidesOnDataInsteadOfWaiting_RFC1122_4_2_3_2) {
  establish();
  send({.seq = rn + 1, .ack = iss + 1, .payload = "hi"});
  app_write("yo");
  expect({.seq = iss + 1, .ack = rn + 3, .window = 63998, .payload = "yo", .psh = true});
  advance(40);
  expect_nothing();
}

TEST_P(NagleDelayedAck, DelayedAckWaitsNoLongerThanItsTimeout_RFC1122_4_2_3_2) {
  establish();
  send({.seq = rn + 1, .ack = iss + 1, .payload = "a"});
  advance(30);
  send({.seq = rn + 2, .ack = iss + 1, .payload = "b"});
  advance(9);
  expect_nothing();
  advance(1);
  expect({.seq = iss + 1, .ack = rn + 3, .window = 63998});
}

TEST_P(NagleDelayedAck, DelayedAckTimeoutIsConfigurable_RFC1122_4_2_3_2) {
  config.delayed_ack_ns = 100 * ms;
  establish();
  send({.seq = rn + 1, .ack = iss + 1, .payload = "x"});
  advance(99);
  expect_nothing();
  advance(1);
  expect({.seq = iss + 1, .ack = rn + 2, .window = 63999});
}

TEST_P(NagleDelayedAck, ZeroDelayAcksEverySegment) {
  config.delayed_ack_ns = 0;
  establish();
  send({.seq = rn + 1, .ack = iss + 1, .payload = "x"});
  expect({.seq = iss + 1, .ack = rn + 2, .window = 63999});
}

TCP_IN_BOTH_SEQUENCE_SPACES(NagleDelayedAck);

}  // namespace
}  // namespace affine::stack::tcp::testing
