// Data through the uring backend with the Linux kernel as the peer: many
// concurrent connections, large writes in both directions, half-close.

#include <atomic>
#include <thread>
#include <vector>

#include "affine/net.hh"
#include "tests/drivers/uring/kernel_peer.hh"
#include "tests/drivers/uring/uring_fixture.hh"

namespace affine::test {
namespace {

using uring_echo = uring_test;

std::uint64_t in_10s() { return now_ns() + 10'000'000'000ULL; }

// Echo until the peer closes its side.
void echo(net::tcp_stream& s) {
  std::array<std::byte, 4096> buf;
  for (;;) {
    auto n = s.read(buf, in_10s());
    if (!n || *n == 0) return;
    if (!s.write({buf.data(), *n}, in_10s())) return;
  }
}

TEST_F(uring_echo, ServesManyConcurrentKernelClients) {
  constexpr int threads = 8, per_thread = 8, rounds = 20;
  std::atomic<int> bad_echoes{0};
  std::vector<std::thread> clients;
  const int accepted = rt_->run([&] {
    auto l = net::listen({.local = {net::loopback, 0}});
    if (!l) return -1;
    const std::uint16_t port = l->local().port;
    EXPECT_NE(port, 0);
    // Each kernel client holds all its connections open at once and sends
    // one message of a different size on each in turn.
    for (int t = 0; t < threads; ++t) {
      clients.emplace_back([&, t, port] {
        std::vector<kernel_socket> conns;
        for (int c = 0; c < per_thread; ++c) conns.push_back(kernel_socket::connect_to(port));
        std::vector<std::byte> out, in;
        for (int r = 0; r < rounds; ++r) {
          for (int c = 0; c < per_thread; ++c) {
            out.resize(1 + std::size_t(r * 397 + c * 131 + t * 17) % 6000);
            for (std::size_t i = 0; i < out.size(); ++i) out[i] = pattern_byte(std::uint64_t(t * 100 + c), i + r);
            in.assign(out.size(), std::byte{0});
            if (!conns[c].write_all(out) || !conns[c].read_exactly(in) || in != out) ++bad_echoes;
          }
        }
      });
    }
    std::vector<fiber_handle> servers;
    for (int i = 0; i < threads * per_thread; ++i) {
      auto s = l->accept(in_10s());
      if (!s) break;
      EXPECT_EQ(s->remote().addr, net::loopback);
      servers.push_back(spawn([c = std::move(*s)]() mutable { echo(c); }).value());
    }
    for (auto& h : servers) h.join();
    return int(servers.size());
  });
  for (auto& t : clients) t.join();
  EXPECT_EQ(accepted, threads * per_thread);
  EXPECT_EQ(bad_echoes.load(), 0);
}

// Megabytes in one write(): the send loop goes on after short sends (the
// send buffer is made small so that there are many).
TEST_F(uring_echo, LargeWriteArrivesIntactAtAKernelReader) {
  constexpr std::size_t size = 8 << 20;
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  fnv1a received;
  std::thread reader([&] {
    kernel_socket s = listener.accept_one();
    std::vector<std::byte> buf(1 << 16);
    for (ssize_t n; (n = s.read_some(buf)) > 0;) received.add({buf.data(), std::size_t(n)});
  });
  fnv1a sent;
  rt_->run([&] {
    std::vector<std::byte> data(size);
    for (std::size_t i = 0; i < size; ++i) data[i] = pattern_byte(7, i);
    sent.add(data);
    auto s = net::connect({net::loopback, listener.port()}, in_10s(), {.send_buffer = 64 << 10});
    ASSERT_TRUE(s.has_value()) << s.error().message();
    EXPECT_EQ(s->remote().port, listener.port());
    EXPECT_EQ(s->local().addr, net::loopback);
    auto w = s->write(data, in_10s());
    EXPECT_TRUE(w.has_value()) << w.error().message();
  });
  reader.join();
  EXPECT_EQ(received.bytes(), size);
  EXPECT_EQ(received.value(), sent.value());
}

TEST_F(uring_echo, LargeKernelWriteArrivesIntact) {
  constexpr std::size_t size = 8 << 20;
  fnv1a sent, received;
  std::thread writer;
  rt_->run([&] {
    auto l = net::listen({.local = {net::loopback, 0}, .accepted = {.receive_buffer = 64 << 10}});
    ASSERT_TRUE(l.has_value());
    writer = std::thread([&, port = l->local().port] {
      std::vector<std::byte> data(size);
      for (std::size_t i = 0; i < size; ++i) data[i] = pattern_byte(11, i);
      sent.add(data);
      kernel_socket s = kernel_socket::connect_to(port);
      s.write_all(data);
    });
    auto s = l->accept(in_10s());
    ASSERT_TRUE(s.has_value()) << s.error().message();
    std::vector<std::byte> buf(100'000);  // not a divisor of the size
    for (;;) {
      auto n = s->read(buf, in_10s());
      ASSERT_TRUE(n.has_value()) << n.error().message();
      if (*n == 0) break;
      received.add({buf.data(), *n});
    }
  });
  writer.join();
  EXPECT_EQ(received.bytes(), size);
  EXPECT_EQ(received.value(), sent.value());
}

// shutdown_write() sends a FIN; reading goes on until the peer's.
TEST_F(uring_echo, HalfCloseLetsThePeerFinishItsReply) {
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  std::thread peer([&] {
    kernel_socket s = listener.accept_one();
    std::array<std::byte, 64> buf;
    std::size_t total = 0;
    for (ssize_t n; (n = s.read_some(buf)) > 0;) total += std::size_t(n);
    const std::string reply = "got " + std::to_string(total);
    s.write_all(std::as_bytes(std::span(reply)));
  });
  rt_->run([&] {
    auto s = net::connect({net::loopback, listener.port()}, in_10s(), {.no_delay = true, .keepalive = true});
    ASSERT_TRUE(s.has_value());
    const std::string msg(300, 'x');
    ASSERT_TRUE(s->write(std::as_bytes(std::span(msg))));
    ASSERT_TRUE(s->shutdown_write());
    std::string reply;
    std::array<std::byte, 64> buf;
    for (;;) {
      auto n = s->read(buf, in_10s());
      ASSERT_TRUE(n.has_value());
      if (*n == 0) break;
      reply.append(reinterpret_cast<const char*>(buf.data()), *n);
    }
    EXPECT_EQ(reply, "got 300");
    EXPECT_TRUE(s->set_no_delay(false));
    EXPECT_TRUE(s->set_keepalive(false));
  });
  peer.join();
}

// stream_options::congestion sets TCP_CONGESTION: a name the kernel does
// not know ("newreno" is "reno" there) fails the connect with ENOENT.
TEST_F(uring_echo, CongestionOptionNamesAKernelAlgorithm) {
  auto listener = kernel_socket::listen_any();
  ASSERT_TRUE(listener.valid());
  std::thread peer([&] {
    for (int i = 0; i < 2; ++i) {
      kernel_socket s = listener.accept_one();
      std::array<std::byte, 16> buf;
      while (s.read_some(buf) > 0) {
      }
    }
  });
  rt_->run([&] {
    for (auto cc : {net::congestion_control::newreno, net::congestion_control::cubic}) {
      auto s = net::connect({net::loopback, listener.port()}, in_10s(), {.congestion = cc});
      ASSERT_TRUE(s.has_value()) << s.error().message();
      ASSERT_TRUE(s->write(std::as_bytes(std::span("x", 1))));
      s->close();
    }
  });
  peer.join();
}

}  // namespace
}  // namespace affine::test
