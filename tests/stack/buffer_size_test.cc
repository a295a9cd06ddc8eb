// The buffers' auto-tuning through the socket API, stack to stack on the
// in-process wire: a stream that names its buffers (stream_options
// send_buffer, receive_buffer; SO_SNDBUF, SO_RCVBUF) keeps them, one that
// does not has them grow with what it carries, the bytes intact either way.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/stack/pattern_stream.hh"
#include "tests/stack/two_stacks.hh"

namespace affine::stack {
namespace {

constexpr std::uint64_t ms = 1'000'000;

class buffer_sizes : public testing::two_stacks {
 protected:
  void SetUp() override { start(); }

  struct sizes {
    std::size_t send = 0, receive = 0;
  };

  // The capacities of `st`'s connection from local port `port`, as
  // describe() writes them ("queued=used/capacity", "rcv.buf=used/capacity").
  // (No std::regex: its recursion overruns a fiber's stack.)
  static sizes buffers_of(const stack& st, std::uint16_t port) {
    const auto capacity = [](const std::string& line, const std::string& field) -> std::size_t {
      const std::size_t at = line.find(" " + field + "=");
      const std::size_t slash = at == std::string::npos ? at : line.find('/', at);
      return slash == std::string::npos ? 0 : std::stoul(line.substr(slash + 1));
    };
    const std::string from = ":" + std::to_string(port) + " > ";
    for (const std::string& line : st.describe_connections())
      if (line.find(from) != std::string::npos) return {capacity(line, "queued"), capacity(line, "rcv.buf")};
    ADD_FAILURE() << "no connection from port " << port;
    return {};
  }

  // `total` bytes each way at once on s, pattern `seed` out and `peer_seed`
  // in, checked; true when all came intact.
  static bool exchange(net::tcp_stream& s, std::size_t total, std::uint64_t seed, std::uint64_t peer_seed) {
    const std::uint64_t deadline = now_ns() + 60'000 * ms;
    bool wrote = false;
    auto writer = spawn([&] { wrote = testing::write_pattern(s, total, seed, deadline); }).value();
    const bool read = testing::read_pattern(s, total, peer_seed, deadline);
    writer.join();
    return wrote && read;
  }
};

TEST_F(buffer_sizes, AStreamThatNamesItsBuffersKeepsThemAndOneThatDoesNotGrows) {
  drivers::wire::link_config lc;
  lc.clock = drivers::wire::clock_kind::monotonic;
  // 40 ms: 256 KiB a round trip is 6.5 MB/s, well below what the stacks
  // carry even under a sanitizer, so the buffers are what limit.
  lc.a_to_b.delay_ns = lc.b_to_a.delay_ns = 20 * ms;
  run(lc, [&](stack& a, stack& b) {
    // Neither the congestion window nor b's window may be what limits a's
    // sending, or a's send buffer rightly stays as it is (a CI run on a
    // loaded machine saw that once). So both ends run NewReno: its slow
    // start has no HyStart++ to end it early on a round trip that the
    // machine's load, not the path, made longer. And b's streams take all
    // 8 MiB at once: b's window never waits for its reader.
    const net::stream_options far_opts{.congestion = net::congestion_control::newreno,
                                       .receive_buffer = std::size_t(8) << 20};
    auto l = b.backend().listen({.local = {net::any_address, 0}, .backlog = 4, .accepted = far_opts});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    net::tcp_listener listener(std::move(*l));
    const std::uint16_t port = listener.local().port;
    for (const bool named : {false, true}) {
      net::stream_options opts{.congestion = net::congestion_control::newreno};
      if (named) opts.send_buffer = opts.receive_buffer = 64 * 1024;
      const std::size_t total = std::size_t(named ? 1 : 8) << 20;
      auto server = spawn([&] {
        auto far = listener.accept(now_ns() + 5000 * ms);
        ASSERT_TRUE(far.has_value()) << far.error().message();
        EXPECT_TRUE(exchange(*far, total, 2, 1));
        far->close();
      }).value();
      auto c = a.backend().connect({net::ipv4_address{testing::b_ip}, port}, now_ns() + 5000 * ms, opts);
      ASSERT_TRUE(c.has_value()) << c.error().message();
      net::tcp_stream near(std::move(*c));
      EXPECT_TRUE(exchange(near, total, 1, 2)) << "named " << named;
      server.join();
      const sizes s = buffers_of(a, near.local().port);
      if (named) {
        EXPECT_EQ(s.send, 64u * 1024);
        EXPECT_EQ(s.receive, 64u * 1024);
      } else {
        // What makes the named stream's sizes mean something.
        EXPECT_GT(s.send, 256u * 1024) << "the send buffer did not grow: the test proves little";
        EXPECT_GT(s.receive, 256u * 1024) << "the receive buffer did not grow: the test proves little";
      }
      near.close();
    }
    listener.close();
  });
}

}  // namespace
}  // namespace affine::stack
