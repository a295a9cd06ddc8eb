// UDP sockets on the uring backend (issue 5, "UDP sockets: bind, send_to,
// recv_from"), over loopback: datagrams between two udp_sockets and with a
// kernel socket, truncation, deadlines, close waking a reader, and the
// errors; and SO_LINGER from stream_options.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "affine/net.hh"
#include "tests/drivers/uring/kernel_peer.hh"
#include "tests/net/kernel_udp.hh"
#include "tests/drivers/uring/uring_fixture.hh"

namespace affine::test {
namespace {

using uring_udp = uring_test;
using uring_linger = uring_test;
using namespace std::chrono_literals;

constexpr std::uint64_t ms = 1'000'000;
std::uint64_t in_10s() { return now_ns() + 10'000 * ms; }

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s)); }
std::string text_of(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

TEST_F(uring_udp, BindToPortZeroGetsAnEphemeralPort) {
  rt_->run([&] {
    auto u = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(u.has_value()) << u.error().message();
    EXPECT_NE(u->local().port, 0);
    EXPECT_EQ(u->local().addr, net::loopback);
  });
}

TEST_F(uring_udp, DatagramsGoBothWaysBetweenTwoSockets) {
  rt_->run([&] {
    auto a = net::bind_udp({.local = {net::loopback, 0}});
    auto b = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(a && b);
    // Sizes from empty to the largest datagram loopback carries unfragmented.
    const std::vector<std::size_t> sizes{0, 1, 1472, 9000, 65507};
    std::vector<std::byte> out, in(65536);
    for (std::size_t n : sizes) {
      out.resize(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = pattern_byte(n, i);
      ASSERT_TRUE(a->send_to(b->local(), out)) << n;
      auto got = b->recv_from(in, in_10s());
      ASSERT_TRUE(got.has_value()) << n << ": " << got.error().message();
      EXPECT_EQ(got->size, n);
      EXPECT_FALSE(got->truncated);
      EXPECT_EQ(got->from, a->local());
      EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin())) << n;
      ASSERT_TRUE(b->send_to(got->from, std::span(in).first(got->size)));
      auto back = a->recv_from(in, in_10s());
      ASSERT_TRUE(back.has_value());
      EXPECT_EQ(back->size, n);
      EXPECT_EQ(back->from, b->local());
    }
  });
}

TEST_F(uring_udp, AKernelSocketIsAPeerBothWays) {
  kernel_udp peer(INADDR_LOOPBACK, INADDR_LOOPBACK, 10);
  std::pair<std::string, std::uint16_t> reply;
  rt_->run([&] {
    auto u = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(u.has_value());
    std::thread t([&, port = u->local().port] {
      peer.send_to(port, bytes_of("hello from the kernel"));
      std::array<std::byte, 2048> in;
      if (const auto [n, from] = peer.recv(in); n >= 0) reply = {text_of(std::span(in).first(std::size_t(n))), from};
    });
    std::array<std::byte, 64> buf;
    auto got = u->recv_from(buf, in_10s());
    ASSERT_TRUE(got.has_value()) << got.error().message();
    EXPECT_EQ(text_of(std::span(buf).first(got->size)), "hello from the kernel");
    EXPECT_EQ(got->from, (net::endpoint{net::loopback, peer.port()}));
    EXPECT_TRUE(u->send_to(got->from, bytes_of("hello from affine")));
    t.join();
    EXPECT_EQ(reply.second, u->local().port);
  });
  EXPECT_EQ(reply.first, "hello from affine");
}

TEST_F(uring_udp, AShortBufferTruncatesOneDatagramAndTheNextArrivesWhole) {
  rt_->run([&] {
    auto a = net::bind_udp({.local = {net::loopback, 0}});
    auto b = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(a && b);
    ASSERT_TRUE(a->send_to(b->local(), bytes_of("0123456789abcdef")));
    ASSERT_TRUE(a->send_to(b->local(), bytes_of("next")));
    std::array<std::byte, 10> small;
    auto got = b->recv_from(small, in_10s());
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->size, 10u);
    EXPECT_TRUE(got->truncated);
    EXPECT_EQ(text_of(small), "0123456789");
    got = b->recv_from(small, in_10s());
    ASSERT_TRUE(got.has_value());
    EXPECT_FALSE(got->truncated);
    EXPECT_EQ(text_of(std::span(small).first(got->size)), "next");
  });
}

TEST_F(uring_udp, RecvFromTimesOutAtItsDeadlineAndTheSocketStillWorks) {
  rt_->run([&] {
    auto a = net::bind_udp({.local = {net::loopback, 0}});
    auto b = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(a && b);
    std::array<std::byte, 16> buf;
    for (int i = 0; i < 3; ++i) {
      const std::uint64_t t0 = now_ns();
      auto got = b->recv_from(buf, t0 + 30 * ms);
      ASSERT_FALSE(got.has_value());
      EXPECT_EQ(got.error(), std::errc::timed_out);
      EXPECT_GE(now_ns() - t0, 30 * ms);
    }
    ASSERT_TRUE(a->send_to(b->local(), bytes_of("late")));
    auto got = b->recv_from(buf, in_10s());
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(text_of(std::span(buf).first(got->size)), "late");
  });
}

TEST_F(uring_udp, CloseFromAnotherFiberWakesAReaderWithOperationCanceled) {
  rt_->run([&] {
    auto u = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(u.has_value());
    std::error_code seen;
    auto reader = spawn([&] {
      std::array<std::byte, 16> buf;
      auto got = u->recv_from(buf, in_10s());
      if (!got) seen = got.error();
    }).value();
    this_fiber::sleep_for(20ms);
    u->close();
    reader.join();
    EXPECT_EQ(seen, std::errc::operation_canceled);
  });
}

TEST_F(uring_udp, BindErrorsAreReported) {
  rt_->run([&] {
    auto a = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(a.has_value());
    auto again = net::bind_udp({.local = a->local()});
    ASSERT_FALSE(again.has_value());
    EXPECT_EQ(again.error(), std::errc::address_in_use);
    auto no_queue = net::bind_udp({.local = {net::loopback, 0}, .receive_queue = 0});
    ASSERT_FALSE(no_queue.has_value());
    EXPECT_EQ(no_queue.error(), std::errc::invalid_argument);
    auto foreign = net::bind_udp({.local = {net::ipv4_address{0x0a0b0c0d}, 0}});  // 10.11.12.13: not ours
    ASSERT_FALSE(foreign.has_value());
    EXPECT_EQ(foreign.error(), std::errc::address_not_available);
  });
}

TEST_F(uring_udp, ADatagramLargerThanThePathIsMessageSize) {
  rt_->run([&] {
    auto a = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(a.has_value());
    std::vector<std::byte> big(65508);
    auto r = a->send_to({net::loopback, 9}, big);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), std::errc::message_size);
    net::udp_socket closed;
    EXPECT_EQ(closed.send_to({net::loopback, 9}, big).error(), std::errc::bad_file_descriptor);
  });
}

// stream_options::linger = 0: close() resets the connection (SO_LINGER), so
// the kernel peer's read fails with ECONNRESET instead of seeing a FIN.
TEST_F(uring_linger, ZeroMakesCloseAReset) {
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  for (const bool linger_zero : {true, false}) {
    ssize_t peer_read = 1;
    int peer_errno = 0;
    std::thread peer([&] {
      kernel_socket s = listener.accept_one();
      std::array<std::byte, 8> buf;
      peer_read = s.read_some(buf);
      peer_errno = errno;
    });
    rt_->run([&] {
      net::stream_options o;
      if (linger_zero) o.linger = 0ms;
      auto s = net::connect({net::loopback, listener.port()}, in_10s(), o);
      ASSERT_TRUE(s.has_value());
      s->close();
    });
    peer.join();
    if (linger_zero) {
      EXPECT_EQ(peer_read, -1);
      EXPECT_EQ(peer_errno, ECONNRESET);
    } else {
      EXPECT_EQ(peer_read, 0) << "an orderly close is a FIN";
    }
  }
}

// stream_options::linger > 0 with data the peer never takes: the kernel's
// close waits out the linger time, and must do so on an io_uring worker,
// not on the reactor (a fiber pinned beside the closer keeps its ticks).
TEST_F(uring_linger, ACloseThatLingersDoesNotStallTheReactor) {
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  kernel_socket idle_peer;  // accepts, never reads
  std::thread peer([&] { idle_peer = listener.accept_one(); });
  std::uint64_t close_took = 0, max_gap = 0;
  rt_->run([&] {
    auto closer = spawn([&] {
      net::stream_options o;
      o.linger = 1000ms;
      o.send_buffer = 4096;
      auto s = net::connect({net::loopback, listener.port()}, in_10s(), o);
      ASSERT_TRUE(s.has_value());
      std::vector<std::byte> chunk(65536);
      while (s->write(chunk, now_ns() + 100 * ms)) {}  // until both buffers are full
      std::atomic<bool> stop{false};
      auto ticker = spawn([&] {
        for (std::uint64_t last = now_ns(); !stop; last = now_ns()) {
          this_fiber::sleep_for(5ms);
          max_gap = std::max(max_gap, now_ns() - last);
        }
      }, {.core = 0, .pinned = true}).value();
      this_fiber::sleep_for(20ms);
      const std::uint64_t t0 = now_ns();
      s->close();
      close_took = now_ns() - t0;
      this_fiber::sleep_for(20ms);
      stop = true;
      ticker.join();
    }, {.core = 0, .pinned = true}).value();
    closer.join();
  });
  peer.join();
  EXPECT_LT(close_took, 500 * ms);
  EXPECT_LT(max_gap, 300 * ms) << "the reactor blocked in the kernel's lingering close";
}

}  // namespace
}  // namespace affine::test
