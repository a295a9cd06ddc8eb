// The shipped LISTEN path end to end (issue 20 item 5): a stack on the
// in-process wire, its listener made through the socket API, and the test
// as the peer writing SYNs and ACKs. The rules themselves are tcp::listener's
// (tests/stack/tcp/listen_test.cc at virtual time); these check that
// stack::listen_in, child_settled() and close_listener() keep them: the
// SYN-RECEIVED bound and the SYN cookies past it, the final ACK ignored
// while the accept queue is full, and a closed listener resetting what was
// never accepted.

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "affine/net.hh"
#include "stack/stack.hh"
#include "stack/wire/tcp.hh"
#include "tests/stack/tcp_peer.hh"

namespace affine::stack {
namespace {

using testing::frame, testing::tcp_frame, testing::syn, testing::tcp_of;

class listen_socket_test : public testing::tcp_peer {
 protected:
  listen_socket_test() : tcp_peer("listen_sock_") {}

  // The stack learns the peer's MAC from its first answer's ARP (which
  // holds only a few frames back meanwhile): a SYN, then the RST that
  // returns its connection to LISTEN (RFC 9293 3.10.7.4) and frees its place.
  void learn_peer() {
    send(tcp_frame(syn(40999)));
    ASSERT_EQ(drain().size(), 1u);
    tcp_segment r = syn(40999);
    r.control = tcp_control::rst;
    r.seq = seq32(1001);
    r.options = {};
    send(tcp_frame(r));
    (void)drain();
  }
  // SYNs from `ports`, sent together: the stack's ISS for each port that
  // got a SYN,ACK.
  std::map<std::uint16_t, seq32> syns(const std::vector<std::uint16_t>& ports) {
    for (std::uint16_t p : ports) send(tcp_frame(syn(p)));
    std::map<std::uint16_t, seq32> iss;
    for (const frame& f : drain()) {
      auto t = tcp_of(f);
      if (t && t->control() == tcp_control::syn && t->ack()) iss[t->dst_port()] = t->seq();
    }
    return iss;
  }
  // The final ACK of the handshake from `port`.
  void final_ack(std::uint16_t port, seq32 iss) {
    tcp_segment a = syn(port);
    a.control = tcp_control::none;
    a.seq = seq32(1001);
    a.ack = iss + 1;
    a.options = {};
    send(tcp_frame(a));
  }
  static std::vector<std::uint16_t> ports(std::uint16_t first, unsigned n) {
    std::vector<std::uint16_t> out;
    for (unsigned i = 0; i < n; ++i) out.push_back(std::uint16_t(first + i));
    return out;
  }
  // The listener's backlog (listen_options' default): both queues' bound.
  static constexpr unsigned backlog = 128;
};

// SYN-RECEIVED stays at the backlog; past it a SYN gets a cookie (the
// default tcp.syn_cookies = "auto"), whose ACK becomes a connection, and a
// forged one is dropped without an answer.
TEST_F(listen_socket_test, PastTheBacklogASynGetsACookieThatBecomesAConnection) {
  with_stack([&](stack& st) {
    learn_peer();
    EXPECT_EQ(syns(ports(41000, backlog)).size(), backlog);
    const auto cookie = syns({42000});
    ASSERT_EQ(cookie.size(), 1u);
    EXPECT_EQ(st.counters(0).syn_cookies_sent.load(), 1u);
    EXPECT_EQ(st.counters(0).get(tcp::drop_reason::syn_queue_full), 0u);
    final_ack(42001, cookie.at(42000));  // another port: the hash does not match
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(st.counters(0).get(tcp::drop_reason::syn_cookie_invalid), 1u);
    final_ack(42000, cookie.at(42000));
    (void)drain();
    EXPECT_EQ(st.counters(0).syn_cookies_accepted.load(), 1u);
    auto s = listener_->accept(now_ns() + 1'000'000'000);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->remote().port, 42000);
  });
}

TEST_F(listen_socket_test, AFullAcceptQueueIgnoresTheFinalAckUntilOneIsAccepted) {
  with_stack([&](stack& st) {
    learn_peer();
    auto iss = syns(ports(41000, backlog - 1));
    ASSERT_EQ(iss.size(), backlog - 1);
    for (auto [p, i] : iss) final_ack(p, i);
    (void)drain();
    const auto late = syns({42000, 42001});  // both in SYN-RECEIVED, one place left
    ASSERT_EQ(late.size(), 2u);
    final_ack(42000, late.at(42000));
    final_ack(42001, late.at(42001));  // ignored: no RST, no connection
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(st.counters(0).get(tcp::drop_reason::accept_queue_full), 1u);
    // Room is made; the peer's next ACK completes the handshake.
    auto first = listener_->accept(now_ns() + 1'000'000'000);
    ASSERT_TRUE(first.has_value());
    final_ack(42001, late.at(42001));
    (void)drain();
    std::size_t accepted = 1;
    bool saw_late = false;
    while (auto s = listener_->accept(now_ns() + 100'000'000)) {
      ++accepted;
      saw_late = saw_late || s->remote().port == 42001;
    }
    EXPECT_EQ(accepted, backlog + 1);
    EXPECT_TRUE(saw_late);
  });
}

TEST_F(listen_socket_test, AClosedListenerResetsWhatWasNeverAccepted) {
  with_stack([&](stack&) {
    auto iss = syns({41000});
    ASSERT_EQ(iss.size(), 1u);
    final_ack(41000, iss.at(41000));
    (void)drain();
    listener_->close();
    const auto out = drain();
    ASSERT_EQ(out.size(), 1u);
    auto t = tcp_of(out[0]);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->control(), tcp_control::rst);
    EXPECT_EQ(t->dst_port(), 41000);
    EXPECT_EQ(t->seq(), iss.at(41000) + 1);
  });
}

}  // namespace
}  // namespace affine::stack
