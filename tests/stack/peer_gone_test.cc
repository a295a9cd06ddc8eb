// A peer that vanishes (the link cut both ways: a pulled cable, a host
// gone): the stream options that bound how long a connection waits for it
// reach the connection and end it with ETIMEDOUT, counted by why
// (tcp.ended.*), and what the connection did on the way is in the
// stack's totals (stack/tcp_totals.hh), between two stacks on the
// in-process wire, through the backend's socket API. Without them the wait
// is two hours of keepalive silence, or 15 retransmissions (about 9
// minutes) for data.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string_view>

#include "stack/tcp_totals.hh"
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
      a_ = &a;
      body(near);
      const auto ended = ends();
      for (std::size_t r = 0; r < ended.size(); ++r)
        EXPECT_EQ(ended[r], tcp::end_reason(r) == why ? 1u : 0u) << "tcp.ended." << tcp::to_string(tcp::end_reason(r));
      for (unsigned core = 0; core < a.cores(); ++core) std::printf("%s\n", format_counters(core, a.counters(core)).c_str());
      for (std::size_t i = 0; i < tcp_total_count; ++i) final_counted_[i] = counted(tcp_totals[i].name);
      a_ = nullptr;
      far->abort();
    });
  }

  // a's connections that ended, by why, summed over its cores.
  std::array<std::uint64_t, tcp::end_reason_count> ends() const {
    std::array<std::uint64_t, tcp::end_reason_count> ended{};
    for (unsigned core = 0; core < a_->cores(); ++core)
      for (std::size_t r = 0; r < ended.size(); ++r)
        ended[r] += a_->counters(core).tcp_ended[r].load(std::memory_order_relaxed);
    return ended;
  }

  // What a's connections counted (tcp_totals.hh), summed over its cores;
  // once a is gone, what they had counted at the end.
  std::uint64_t counted(std::string_view name) const {
    if (a_ != nullptr) return testing::tcp_counted(*a_, name);
    const auto it = std::ranges::find(tcp_totals, name, &tcp_total::name);
    return it == tcp_totals.end() ? 0 : final_counted_[std::size_t(it - tcp_totals.begin())];
  }

  stack* a_ = nullptr;  // while the stacks run
  std::array<std::uint64_t, tcp_total_count> final_counted_{};

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
  EXPECT_EQ(counted("keepalive_probes"), 1u);
  EXPECT_EQ(counted("retransmission_timeouts"), 0u);
}

// The stack's totals follow a connection while it lives, not only once it
// ends: the first of three unanswered keepalive probes is counted a
// second before the connection is given up.
TEST_F(peer_gone, ALiveConnectionIsInTheTotals) {
  connected_then_cut({.keepalive = true, .keepalive_idle = 1s, .keepalive_interval = 1s, .keepalive_count = 3},
                     tcp::end_reason::keepalive, [&](net::tcp_stream& s) {
                       const std::uint64_t t0 = now_ns();
                       while (counted("keepalive_probes") == 0 && now_ns() - t0 < 10'000 * ms)
                         ASSERT_TRUE(this_fiber::sleep_for(10ms).has_value());
                       EXPECT_EQ(counted("keepalive_probes"), 1u);
                       const auto ended = ends();
                       EXPECT_EQ(std::accumulate(ended.begin(), ended.end(), std::uint64_t{0}), 0u);
                       const auto [err, took] = read_until_gone(s);
                       EXPECT_EQ(err, std::make_error_code(std::errc::timed_out));
                     });
  EXPECT_EQ(counted("keepalive_probes"), 3u);
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
  EXPECT_GE(counted("retransmission_timeouts"), 1u);
  EXPECT_GE(counted("retransmitted_segments"), 1u);
  EXPECT_EQ(counted("keepalive_probes"), 0u);
}

}  // namespace
}  // namespace affine::stack
