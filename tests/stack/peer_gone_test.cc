// A peer that vanishes (the link cut both ways: a pulled cable, a host
// gone): the stream options that bound how long a connection waits for it
// reach the connection and end it with ETIMEDOUT, counted by why
// (tcp.ended.*), between two stacks on the in-process wire, through the
// backend's socket API. Without them the
// wait is two hours of keepalive silence, or 15 retransmissions (about 9
// minutes) for data.

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>

#include "tests/stack/two_stacks.hh"

namespace affine::stack {
namespace {

using namespace std::chrono_literals;
constexpr std::uint64_t ms = 1'000'000;

class peer_gone : public testing::two_stacks {
 protected:
  void SetUp() override { start(); }

  // A connection from a to b with `opts` on a's side, then the link cut;
  // `body` gets a's stream. b's stream is held until the end. Then a's
  // counters must say the connection ended for `why`, and only that.
  void connected_then_cut(const net::stream_options& opts, tcp::end_reason why,
                          const std::function<void(net::tcp_stream&)>& body) {
    drivers::wire::link_config lc;
    lc.clock = drivers::wire::clock_kind::monotonic;
    run(lc, [&](stack& a, stack& b) {
      auto l = b.backend().listen({.local = {net::any_address, 0}, .backlog = 4});
      ASSERT_TRUE(l.has_value()) << l.error().message();
      net::tcp_listener listener(std::move(*l));
      auto c = a.backend().connect({net::ipv4_address{testing::b_ip}, listener.local().port}, now_ns() + 5000 * ms,
                                   opts);
      ASSERT_TRUE(c.has_value()) << c.error().message();
      net::tcp_stream near(std::move(*c));
      auto far = listener.accept(now_ns() + 5000 * ms);
      ASSERT_TRUE(far.has_value()) << far.error().message();
      drivers::wire::impairments cut;
      cut.loss = 1.0;
      for (auto side : {drivers::wire::side::a, drivers::wire::side::b})
        ASSERT_TRUE(link_->set_impairments(side, cut).has_value());
      body(near);
      std::array<std::uint64_t, tcp::end_reason_count> ended{};
      for (unsigned core = 0; core < a.cores(); ++core)
        for (std::size_t r = 0; r < ended.size(); ++r)
          ended[r] += a.counters(core).tcp_ended[r].load(std::memory_order_relaxed);
      for (std::size_t r = 0; r < ended.size(); ++r)
        EXPECT_EQ(ended[r], tcp::end_reason(r) == why ? 1u : 0u) << "tcp.ended." << tcp::to_string(tcp::end_reason(r));
      far->abort();
    });
  }

  // A read that ends with the connection: its error and how long it took.
  static std::pair<std::error_code, std::uint64_t> read_until_gone(net::tcp_stream& s) {
    std::array<std::byte, 16> buf;
    const std::uint64_t t0 = now_ns();
    auto r = s.read(buf, t0 + 20'000 * ms);
    const std::uint64_t took = now_ns() - t0;
    std::printf("the read ended after %.0f ms\n", double(took) / 1e6);
    return {r ? std::error_code{} : r.error(), took};
  }
};

// RFC 1122 4.2.3.6 with TCP_KEEPIDLE 1 s, TCP_KEEPINTVL 1 s, TCP_KEEPCNT 1:
// one probe after a second of silence, unanswered a second later: gone at
// about 2 s (the defaults would wait two hours).
TEST_F(peer_gone, KeepaliveTimingComesFromTheStreamOptions) {
  connected_then_cut({.keepalive = true, .keepalive_idle = 1s, .keepalive_interval = 1s, .keepalive_count = 1},
                     tcp::end_reason::keepalive, [](net::tcp_stream& s) {
                       const auto [err, took] = read_until_gone(s);
                       EXPECT_EQ(err, std::make_error_code(std::errc::timed_out));
                       EXPECT_GE(took, 1500 * ms);
                       EXPECT_LT(took, 10'000 * ms);
                     });
}

// RFC 9293 3.10.8: data unacknowledged for the user timeout ends the
// connection, retransmitted meanwhile (the count alone would take minutes).
TEST_F(peer_gone, UnacknowledgedDataEndsAtTheUserTimeout) {
  connected_then_cut({.user_timeout = 500ms}, tcp::end_reason::user_timeout, [](net::tcp_stream& s) {
    ASSERT_TRUE(s.write(std::as_bytes(std::span("lost", 4)), now_ns() + 1000 * ms));
    const auto [err, took] = read_until_gone(s);
    EXPECT_EQ(err, std::make_error_code(std::errc::timed_out));
    EXPECT_GE(took, 400 * ms);
    EXPECT_LT(took, 10'000 * ms);
  });
}

}  // namespace
}  // namespace affine::stack
