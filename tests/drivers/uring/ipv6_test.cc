// IPv6 on kernel sockets through the uring backend (issue 21): streams and
// datagrams over ::1, and dual-stack sockets on :: that take IPv4 peers and
// report them as IPv4-mapped addresses (RFC 3493 3.7), unless v6_only.
// Loopback only.

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "affine/net.hh"
#include "tests/drivers/uring/uring_fixture.hh"

namespace affine::test {
namespace {

class uring_ipv6 : public uring_test {
 protected:
  void SetUp() override {
    const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0) GTEST_SKIP() << "this host has no IPv6: " << std::strerror(errno);
    ::close(fd);
    uring_test::SetUp();
  }
};

std::uint64_t in_5s() { return now_ns() + 5'000'000'000ULL; }

const net::address any6 = net::any_address_v6;
const net::address mapped_loopback = net::ipv6_address::v4_mapped(net::loopback);

// One message there and back on a connected pair; the server side's view.
void exchange(net::tcp_stream& client, net::tcp_stream& server) {
  const std::array<std::byte, 3> ping{std::byte{'a'}, std::byte{'b'}, std::byte{'c'}};
  std::array<std::byte, 3> got{};
  ASSERT_TRUE(client.write(ping, in_5s()));
  ASSERT_EQ(server.read(got, in_5s()).value_or(0), 3u);
  EXPECT_EQ(got, ping);
}

TEST_F(uring_ipv6, AStreamOverTheIpv6LoopbackReportsIpv6Endpoints) {
  rt_->run([&] {
    auto l = net::listen({.local = {net::loopback_v6, 0}});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    EXPECT_EQ(l->local().addr, net::address(net::loopback_v6));
    auto c = net::connect({net::loopback_v6, l->local().port}, in_5s());
    ASSERT_TRUE(c.has_value()) << c.error().message();
    auto s = l->accept(in_5s());
    ASSERT_TRUE(s.has_value());
    exchange(*c, *s);
    EXPECT_EQ(s->remote(), c->local());
    EXPECT_EQ(c->remote(), s->local());
    EXPECT_EQ(s->remote().addr, net::address(net::loopback_v6));
    EXPECT_EQ(c->remote().to_string(), "[::1]:" + std::to_string(l->local().port));
  });
}

TEST_F(uring_ipv6, ADualStackListenerTakesBothFamiliesAndMapsIpv4Peers) {
  rt_->run([&] {
    auto l = net::listen({.local = {any6, 0}});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    EXPECT_EQ(l->local().addr, any6);
    const std::uint16_t port = l->local().port;
    auto c4 = net::connect({net::loopback, port}, in_5s());
    ASSERT_TRUE(c4.has_value()) << c4.error().message();
    auto s4 = l->accept(in_5s());
    ASSERT_TRUE(s4.has_value());
    exchange(*c4, *s4);
    EXPECT_EQ(c4->local().addr, net::address(net::loopback));  // the client's own socket is IPv4
    EXPECT_EQ(s4->remote().addr, mapped_loopback);
    EXPECT_EQ(s4->remote().port, c4->local().port);
    EXPECT_EQ(s4->remote().to_string(), "[::ffff:127.0.0.1]:" + std::to_string(c4->local().port));

    auto c6 = net::connect({net::loopback_v6, port}, in_5s());
    ASSERT_TRUE(c6.has_value()) << c6.error().message();
    auto s6 = l->accept(in_5s());
    ASSERT_TRUE(s6.has_value());
    exchange(*c6, *s6);
    EXPECT_EQ(s6->remote().addr, net::address(net::loopback_v6));
  });
}

TEST_F(uring_ipv6, AV6OnlyListenerRefusesIpv4) {
  rt_->run([&] {
    auto l = net::listen({.local = {any6, 0}, .v6_only = true});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    auto c4 = net::connect({net::loopback, l->local().port}, in_5s());
    ASSERT_FALSE(c4.has_value());
    EXPECT_EQ(c4.error(), std::errc::connection_refused);
    auto c6 = net::connect({net::loopback_v6, l->local().port}, in_5s());
    EXPECT_TRUE(c6.has_value());
  });
}

TEST_F(uring_ipv6, AnIpv4MappedPeerIsReachedFromAnIpv6Socket) {
  rt_->run([&] {
    auto l = net::listen({.local = {net::loopback, 0}});
    ASSERT_TRUE(l.has_value());
    // The kernel connects an AF_INET6 socket to ::ffff:127.0.0.1 over IPv4.
    auto c = net::connect({mapped_loopback, l->local().port}, in_5s());
    ASSERT_TRUE(c.has_value()) << c.error().message();
    auto s = l->accept(in_5s());
    ASSERT_TRUE(s.has_value());
    exchange(*c, *s);
    EXPECT_EQ(c->remote().addr, mapped_loopback);
    EXPECT_EQ(s->remote().addr, net::address(net::loopback));
  });
}

TEST_F(uring_ipv6, DatagramsTravelOverIpv6AndADualStackPortMapsIpv4Senders) {
  rt_->run([&] {
    auto server = net::bind_udp({.local = {any6, 0}});
    ASSERT_TRUE(server.has_value()) << server.error().message();
    const std::uint16_t port = server->local().port;
    auto c6 = net::bind_udp({.local = {net::loopback_v6, 0}});
    auto c4 = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(c6.has_value() && c4.has_value());
    const std::array<std::byte, 2> hi{std::byte{'h'}, std::byte{'i'}};
    std::array<std::byte, 16> buf{};

    ASSERT_TRUE(c6->send_to({net::loopback_v6, port}, hi));
    auto got6 = server->recv_from(buf, in_5s());
    ASSERT_TRUE(got6.has_value());
    EXPECT_EQ(got6->size, 2u);
    EXPECT_EQ(got6->from, c6->local());

    ASSERT_TRUE(c4->send_to({net::loopback, port}, hi));
    auto got4 = server->recv_from(buf, in_5s());
    ASSERT_TRUE(got4.has_value());
    EXPECT_EQ(got4->from.addr, mapped_loopback);
    EXPECT_EQ(got4->from.port, c4->local().port);

    // The reply goes back to an IPv4 endpoint given as such: the IPv6
    // socket sends it to the mapped address.
    ASSERT_TRUE(server->send_to({net::loopback, c4->local().port}, hi));
    auto back = c4->recv_from(buf, in_5s());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->from, (net::endpoint{net::loopback, port}));
  });
}

TEST_F(uring_ipv6, AnIpv4SocketCannotReachAnIpv6Peer) {
  rt_->run([&] {
    auto u = net::bind_udp({.local = {net::loopback, 0}});
    ASSERT_TRUE(u.has_value());
    const std::array<std::byte, 1> b{};
    auto r = u->send_to({net::loopback_v6, 9}, b);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), std::errc::address_family_not_supported);
  });
}

}  // namespace
}  // namespace affine::test
