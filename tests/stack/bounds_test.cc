// Bounds on what a peer can make the stack keep (issue 20 item 4), on the
// in-process wire: TIME-WAIT stays at tcp.max_time_wait, the connection
// that would go past it ending at once (counted), as Linux does past
// tcp_max_tw_buckets.

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

}  // namespace
}  // namespace affine::stack
