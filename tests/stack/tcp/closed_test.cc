// CLOSED (RFC 9293 3.10.7.1): a segment for a connection that no longer
// exists is answered with a RST that its sender will accept.

#include <set>
#include <string_view>

#include "stack/tcp/reset.hh"
#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Closed : public tcp_test {
 protected:
  // A connection that went from SYN-SENT to CLOSED.
  void SetUp() override {
    open();
    expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
    app_abort();
    expect_nothing();
    ASSERT_EQ(conn().state(), tcp_state::closed);
  }
};

TEST_P(Closed, AbortInSynSentSendsNothing_RFC9293_3_10_5) {
  EXPECT_FALSE(conn().error());
  EXPECT_EQ(conn().end(), end_reason::aborted);
  EXPECT_TRUE(conn().take_events().has(event::closed));
  EXPECT_EQ(conn().next_deadline(), no_deadline);
}

TEST_P(Closed, SegmentWithAckIsAnsweredWithRstAtSegAck_RFC9293_3_10_7_1) {
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1, .payload = "data"}), drop_reason::closed);
  expect({.control = rst, .seq = iss + 1});
}

TEST_P(Closed, SegmentWithoutAckIsAnsweredWithRstAckCoveringIt_RFC9293_3_10_7_1) {
  EXPECT_EQ(send({.seq = rn, .payload = "abc"}), drop_reason::closed);
  expect({.control = rst, .seq = seq32(0), .ack = rn + 3});
}

TEST_P(Closed, SynCountsInTheAcknowledgedLength_RFC9293_3_10_7_1) {
  EXPECT_EQ(send({.control = syn, .seq = rn}), drop_reason::closed);
  expect({.control = rst, .seq = seq32(0), .ack = rn + 1});
}

TEST_P(Closed, FinCountsInTheAcknowledgedLength_RFC9293_3_10_7_1) {
  EXPECT_EQ(send({.control = fin, .seq = rn, .payload = "xy"}), drop_reason::closed);
  expect({.control = rst, .seq = seq32(0), .ack = rn + 3});
}

TEST_P(Closed, RstIsNeverAnswered_RFC9293_3_10_7_1) {
  EXPECT_EQ(send({.control = rst, .seq = rn, .ack = iss + 1}), drop_reason::closed);
  expect_nothing();
}

TEST_P(Closed, ApplicationCallsFailWithBrokenPipe) {
  const std::string data = "late";
  auto r = conn().send({reinterpret_cast<const std::byte*>(data.data()), data.size()});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), std::make_error_code(std::errc::broken_pipe));
  EXPECT_EQ(conn().writable(), 0u);
}

TEST_P(Closed, ResetForFreeFunctionSwapsPorts_RFC9293_3_10_7_1) {
  tcp_segment in;
  in.src_port = 1234;
  in.dst_port = 80;
  in.seq = rn;
  in.ack = iss + 9;
  const std::optional<tcp_segment> out = reset_for(in);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->src_port, 80);
  EXPECT_EQ(out->dst_port, 1234);
  EXPECT_EQ(out->control, tcp_control::rst);
  EXPECT_EQ(out->seq, iss + 9);
  EXPECT_FALSE(out->ack);
}

TCP_IN_BOTH_SEQUENCE_SPACES(Closed);

TEST(Names, DropReasonsHaveDistinctNamesForTheCounters) {
  std::set<std::string_view> names;
  for (int r = 0; r <= int(drop_reason::ack_too_old); ++r) {
    const std::string_view name = to_string(drop_reason(r));
    EXPECT_NE(name, "?");
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_EQ(to_string(drop_reason::out_of_window), "out_of_window");
}

TEST(Names, StatesAreNamedAsInRfc9293) {
  EXPECT_EQ(to_string(tcp_state::syn_received), "SYN-RECEIVED");
  EXPECT_EQ(to_string(tcp_state::fin_wait_2), "FIN-WAIT-2");
  EXPECT_EQ(to_string(tcp_state::time_wait), "TIME-WAIT");
}

}  // namespace
}  // namespace affine::stack::tcp::testing
