// TIME-WAIT on the in-process wire, through the shipped RX path. Its bound
// (issue 20 item 4): it stays at tcp.max_time_wait, the connection that
// would go past it ending at once (counted), as Linux does past
// tcp_max_tw_buckets. And a SYN newer than a connection in it opens the
// next at once (RFC 6191; the rules are tcp::connection::reopen_iss's,
// tests/stack/tcp/time_wait_test.cc at virtual time).

#include <gtest/gtest.h>

#include "affine/net.hh"
#include "stack/stack.hh"
#include "stack/wire/tcp.hh"
#include "tests/stack/tcp_peer.hh"

namespace affine::stack {
namespace {

using testing::tcp_frame, testing::tcp_of;

class bounds : public testing::tcp_peer {
 protected:
  bounds() : tcp_peer("bounds_") {}

  // The stack closes its side of `s` first; the peer (port `sport`, its
  // next segment `next`) acknowledges the FIN and sends its own: the stack
  // then enters TIME-WAIT (RFC 9293 3.10.7.4, FIN-WAIT-1 with the FIN acked).
  void active_close(net::tcp_stream& s, tcp_segment next) {
    s.close();
    const auto out = drain();
    ASSERT_EQ(out.size(), 1u);
    auto fin = tcp_of(out[0]);
    ASSERT_TRUE(fin.has_value());
    ASSERT_EQ(fin->control(), tcp_control::fin);
    next.control = tcp_control::fin;
    next.ack = fin->seq() + 1;
    send(tcp_frame(next));
    const auto ack = drain();
    ASSERT_EQ(ack.size(), 1u);  // the ACK of our FIN, from TIME-WAIT
  }
};

TEST_F(bounds, TimeWaitStaysAtItsBound) {
  with_stack(
      [&](stack& st) {
        tcp_segment next_a, next_b;
        net::tcp_stream a = establish(40000, next_a);
        net::tcp_stream b = establish(40001, next_b);
        ASSERT_TRUE(a.is_open() && b.is_open());
        EXPECT_EQ(st.connections(), 2u);
        active_close(a, next_a);
        EXPECT_EQ(st.connections(), 2u);  // a in TIME-WAIT
        active_close(b, next_b);
        EXPECT_EQ(st.connections(), 1u);  // b past the bound: ended at once
        EXPECT_EQ(st.counters(0).get(drop::tcp_time_wait_full), 1u);
      },
      [](stack_config& sc) { sc.max_time_wait = 1; });
}

// stack::reopen_time_wait: the old connection leaves the table, the
// listener makes the next under the same tuple, its ISS past everything
// the old one sent; the handshake completes and accept() hands it out.
TEST_F(bounds, ASynNewerThanTimeWaitOpensTheNextConnectionAtOnce) {
  with_stack([&](stack& st) {
    tcp_segment next;
    net::tcp_stream a = establish(40000, next);
    ASSERT_TRUE(a.is_open());
    const seq32 old_iss = *next.ack - 1;
    active_close(a, next);
    EXPECT_EQ(st.connections(), 1u);  // in TIME-WAIT
    tcp_segment again = testing::syn(40000);
    again.seq = seq32(1000 + 100000);
    send(tcp_frame(again));
    const auto out = drain();
    ASSERT_EQ(out.size(), 1u);
    auto synack = tcp_of(out[0]);
    ASSERT_TRUE(synack.has_value());
    EXPECT_EQ(synack->control(), tcp_control::syn);
    ASSERT_TRUE(synack->ack());
    EXPECT_EQ(synack->ack_number(), again.seq + 1);
    EXPECT_EQ(synack->seq(), old_iss + 2 + 65537);  // past the old SND.MAX (its FIN)
    EXPECT_EQ(st.counters(0).time_wait_reopened.load(), 1u);
    tcp_segment ack = testing::syn(40000);
    ack.control = tcp_control::none;
    ack.seq = again.seq + 1;
    ack.ack = synack->seq() + 1;
    ack.options = {};
    send(tcp_frame(ack));
    (void)drain();
    auto b = listener_->accept(now_ns() + 1'000'000'000);
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->remote().port, 40000);
    EXPECT_EQ(st.connections(), 1u);
  });
}

}  // namespace
}  // namespace affine::stack
