// Pacing (tcp.pacing, stack/tcp/pacing.cc) through the whole stack: the
// pacing deadline goes through settle() to the home core's timer wheel,
// and the timer fiber sends the next burst. Two stacks on the in-process
// wire with a 40 ms round trip, both paced, 4 MiB each way through the
// socket API: every byte arrives, and both senders waited for the rate
// (the stacks' tcp.pacing_holds), so that the timer fiber sent what
// followed each hold.

#include <gtest/gtest.h>

#include <cstdio>

#include "tests/stack/pattern_stream.hh"
#include "tests/stack/two_stacks.hh"

namespace affine::stack {
namespace {

constexpr std::uint64_t ms = 1'000'000;

class paced_stream : public testing::two_stacks {
 protected:
  void SetUp() override {
    pacing_ = true;
    start();
  }
};

TEST_F(paced_stream, EveryByteArrivesAndTheSendersWaitedForTheRate) {
  drivers::wire::link_config lc;
  lc.clock = drivers::wire::clock_kind::monotonic;
  lc.a_to_b.delay_ns = lc.b_to_a.delay_ns = 20 * ms;
  constexpr std::size_t total = 4u << 20;
  run(lc, [&](stack& a, stack& b) {
    auto l = b.backend().listen({.local = {net::any_address, 0}, .backlog = 4});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    net::tcp_listener listener(std::move(*l));
    const std::uint64_t deadline = now_ns() + 60'000 * ms;
    auto server = spawn([&] {
      auto far = listener.accept(deadline);
      ASSERT_TRUE(far.has_value()) << far.error().message();
      auto writer = spawn([&] { EXPECT_TRUE(testing::write_pattern(*far, total, 2, deadline)); }).value();
      EXPECT_TRUE(testing::read_pattern(*far, total, 1, deadline));
      writer.join();
      far->close();
    }).value();
    auto c = a.backend().connect({net::ipv4_address{testing::b_ip}, listener.local().port}, deadline, {});
    ASSERT_TRUE(c.has_value()) << c.error().message();
    net::tcp_stream near(std::move(*c));
    auto writer = spawn([&] { EXPECT_TRUE(testing::write_pattern(near, total, 1, deadline)); }).value();
    EXPECT_TRUE(testing::read_pattern(near, total, 2, deadline));
    writer.join();
    server.join();
    near.close();
    listener.close();
    EXPECT_GT(testing::tcp_counted(a, "pacing_holds"), 0u);
    EXPECT_GT(testing::tcp_counted(b, "pacing_holds"), 0u);
    for (unsigned core = 0; core < a.cores(); ++core)
      std::printf("a %s\n", format_counters(core, a.counters(core)).c_str());
  });
}

}  // namespace
}  // namespace affine::stack
