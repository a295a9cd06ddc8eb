// Deadlines, cancellation and the errors a kernel peer can cause, as the
// socket API reports them (std::error_code, never a crash or a hang).

#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "affine/net.hh"
#include "tests/drivers/uring/kernel_peer.hh"
#include "tests/drivers/uring/uring_fixture.hh"

namespace affine::test {
namespace {

using uring_errors = uring_test;

constexpr std::uint64_t ms = 1'000'000;
std::uint64_t in_10s() { return now_ns() + 10'000 * ms; }

TEST_F(uring_errors, ReadDeadlineTimesOutAndTheStreamStillWorks) {
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  std::promise<void> go;
  std::string echoed;
  std::thread peer([&] {
    kernel_socket s = listener.accept_one();
    if (go.get_future().wait_for(std::chrono::seconds(10)) != std::future_status::ready) return;
    s.write_all(std::as_bytes(std::span(std::string_view("ping"))));
    std::array<std::byte, 4> buf;
    if (s.read_exactly(buf)) echoed.assign(reinterpret_cast<const char*>(buf.data()), buf.size());
  });
  rt_->run([&] {
    auto s = net::connect({net::loopback, listener.port()}, in_10s());
    ASSERT_TRUE(s.has_value());
    std::array<std::byte, 16> buf;
    for (int i = 0; i < 3; ++i) {  // the same stream times out again and again
      const std::uint64_t t0 = now_ns();
      auto n = s->read(buf, t0 + 30 * ms);
      ASSERT_FALSE(n.has_value());
      EXPECT_EQ(n.error(), std::errc::timed_out);
      EXPECT_GE(now_ns() - t0, 30 * ms);
    }
    go.set_value();
    std::array<std::byte, 4> ping;
    ASSERT_TRUE(s->read_exactly(ping, in_10s()));
    EXPECT_EQ(std::memcmp(ping.data(), "ping", 4), 0);
    EXPECT_TRUE(s->write(std::as_bytes(std::span(std::string_view("pong"))), in_10s()));
  });
  peer.join();
  EXPECT_EQ(echoed, "pong");
}

// Timed reads on many connections at once, on both cores: every one times
// out, none loses data, and a completion never wakes the wrong read.
TEST_F(uring_errors, ManyConcurrentDeadlinesEachTimeOutAndDataStillFlows) {
  constexpr int conns = 24;
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  std::atomic<int> peers_ok{0};
  std::thread peer([&] {
    std::vector<kernel_socket> ss;
    for (int i = 0; i < conns; ++i) ss.push_back(listener.accept_one());
    for (auto& s : ss) {  // echo one byte on each, after the reads timed out
      std::array<std::byte, 1> b;
      if (s.read_exactly(b) && s.write_all(b)) ++peers_ok;
    }
  });
  std::atomic<int> timeouts{0}, echoes{0};
  rt_->run([&] {
    std::vector<fiber_handle> hs;
    for (int i = 0; i < conns; ++i) {
      hs.push_back(spawn([&, i] {
        auto s = net::connect({net::loopback, listener.port()}, in_10s());
        if (!s) return;
        std::array<std::byte, 8> buf;
        for (int k = 0; k < 5; ++k) {
          auto n = s->read(buf, now_ns() + std::uint64_t(1 + (i + k) % 4) * ms);
          if (!n && n.error() == std::errc::timed_out) ++timeouts;
        }
        const std::byte b{std::uint8_t(i)};
        std::array<std::byte, 1> back;
        if (s->write({&b, 1}, in_10s()) && s->read_exactly(back, in_10s()) && back[0] == b) ++echoes;
      }, {.core = unsigned(i % 2)}).value());
    }
    for (auto& h : hs) h.join();
  });
  peer.join();
  EXPECT_EQ(timeouts.load(), conns * 5);
  EXPECT_EQ(echoes.load(), conns);
  EXPECT_EQ(peers_ok.load(), conns);
}

TEST_F(uring_errors, ConnectToAClosedPortIsRefused) {
  auto bound = kernel_socket::bound_only();  // holds the port, never listens
  ASSERT_TRUE(bound.valid());
  rt_->run([&] {
    auto s = net::connect({net::loopback, bound.port()}, in_10s());
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error(), std::errc::connection_refused) << s.error().message();
  });
}

TEST_F(uring_errors, PeerResetIsConnectionResetOrEndOfStream) {
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  std::promise<void> connected;
  std::thread peer([&] {
    kernel_socket s = listener.accept_one();
    connected.get_future().wait_for(std::chrono::seconds(10));  // else connect() itself may see the reset
    s.reset();
  });
  rt_->run([&] {
    auto s = net::connect({net::loopback, listener.port()}, in_10s());
    connected.set_value();
    ASSERT_TRUE(s.has_value()) << s.error().message();
    std::array<std::byte, 16> buf;
    auto n = s->read(buf, in_10s());
    if (n) {
      EXPECT_EQ(*n, 0u);
    } else {
      EXPECT_EQ(n.error(), std::errc::connection_reset) << n.error().message();
    }
    // Writing to a reset connection fails (EPIPE or ECONNRESET), never SIGPIPE.
    auto w = s->write(std::as_bytes(std::span(std::string_view("late"))), in_10s());
    ASSERT_FALSE(w.has_value());
    EXPECT_TRUE(w.error() == std::errc::broken_pipe || w.error() == std::errc::connection_reset)
        << w.error().message();
  });
  peer.join();
}

TEST_F(uring_errors, AcceptDeadlineTimesOutAndTheListenerStillWorks) {
  rt_->run([&] {
    auto l = net::listen({.local = {net::loopback, 0}, .backlog = 4});
    ASSERT_TRUE(l.has_value());
    const std::uint64_t t0 = now_ns();
    auto none = l->accept(t0 + 20 * ms);
    ASSERT_FALSE(none.has_value());
    EXPECT_EQ(none.error(), std::errc::timed_out);
    EXPECT_GE(now_ns() - t0, 20 * ms);
    std::thread client([port = l->local().port] { kernel_socket::connect_to(port); });
    auto s = l->accept(in_10s());
    EXPECT_TRUE(s.has_value());
    client.join();  // it connected before accept returned: no wait here
  });
}

TEST_F(uring_errors, ListenerCloseWakesEveryBlockedAccept) {
  rt_->run([&] {
    auto l = net::listen({.local = {net::loopback, 0}});
    ASSERT_TRUE(l.has_value());
    std::atomic<int> cancelled{0};
    std::vector<fiber_handle> hs;
    for (unsigned c = 0; c < 2; ++c) {
      hs.push_back(spawn([&] {
        auto s = l->accept(in_10s());
        if (!s && s.error() == std::errc::operation_canceled) ++cancelled;
      }, {.core = c, .pinned = true}).value());
    }
    this_fiber::sleep_for(std::chrono::milliseconds(20));  // both are blocked in accept
    const std::uint64_t t0 = now_ns();
    l->close();
    EXPECT_FALSE(l->is_open());
    for (auto& h : hs) h.join();
    EXPECT_LT(now_ns() - t0, 1000 * ms);
    EXPECT_EQ(cancelled.load(), 2);
  });
}

TEST_F(uring_errors, CloseCancelsAReadInFlight) {
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  std::promise<void> done;
  std::thread peer([&] {
    kernel_socket s = listener.accept_one();
    done.get_future().wait_for(std::chrono::seconds(10));  // stays silent until then
  });
  rt_->run([&] {
    auto s = net::connect({net::loopback, listener.port()}, in_10s());
    ASSERT_TRUE(s.has_value());
    std::error_code got;
    auto reader = spawn([&] {
      std::array<std::byte, 16> buf;
      auto n = s->read(buf, in_10s());
      if (!n) got = n.error();
    }, {.core = 1, .pinned = true}).value();
    this_fiber::sleep_for(std::chrono::milliseconds(20));
    s->close();
    reader.join();
    EXPECT_EQ(got, std::errc::operation_canceled) << got.message();
  });
  done.set_value();
  peer.join();
}

// stream_options outside the ranges Linux's setsockopt takes fail connect()
// and listen() with invalid_argument before anything is sent, on every
// backend alike (net_api.cc checks them); the bounds themselves are taken,
// by the kernel here too.
TEST_F(uring_errors, StreamOptionsOutOfRangeAreInvalidArguments) {
  using namespace std::chrono_literals;
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  std::thread peer([&] { kernel_socket s = listener.accept_one(); });
  rt_->run([&] {
    const net::stream_options bad[] = {{.keepalive_idle = 32768s}, {.keepalive_interval = -1s},
                                       {.keepalive_count = 128}, {.user_timeout = -1ms}};
    for (const net::stream_options& o : bad) {
      auto s = net::connect({net::loopback, listener.port()}, in_10s(), o);
      ASSERT_FALSE(s.has_value());
      EXPECT_EQ(s.error(), std::make_error_code(std::errc::invalid_argument));
      auto l = net::listen({.local = {net::loopback, 0}, .accepted = o});
      ASSERT_FALSE(l.has_value());
      EXPECT_EQ(l.error(), std::make_error_code(std::errc::invalid_argument));
    }
    const net::stream_options edge{.keepalive = true,
                                   .keepalive_idle = 32767s,
                                   .keepalive_interval = 32767s,
                                   .keepalive_count = 127,
                                   .user_timeout = std::chrono::milliseconds(INT_MAX)};
    auto s = net::connect({net::loopback, listener.port()}, in_10s(), edge);
    EXPECT_TRUE(s.has_value()) << s.error().message();
  });
  peer.join();
}

}  // namespace
}  // namespace affine::test
