// IPv6 on the stack against the Linux kernel over net_tap (issue 21),
// inside the network namespace netns_main.cc creates: the link carries
// IPv6 only (fd77::1/64 on the kernel's side, no IPv4 address, but for the
// dual-stack test), affine's port holds fd77::2/64 and a link-local address
// and no IPv4 (again but for the dual-stack test).
// Neighbor Discovery both ways, ping -6 to either address, DAD finding an
// address the kernel holds, TCP both ways and UDP both ways over IPv6, and
// one listener on [::] serving an IPv4 and an IPv6 client at once.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "affine/address.hh"
#include "affine/runtime.hh"
#include "stack/stack.hh"
#include "tests/stack/interop/tap_io.hh"
#include "tests/stack/wire_peer.hh"

namespace affine::stack {
namespace {

using namespace std::chrono_literals;

constexpr const char* tap_iface = "affv6";

ipv6_bytes v6(std::string_view text) { return net::ipv6_address::parse(text).value().bytes; }
const net::address kernel6 = net::ipv6_address{v6("fd77::1")};
const net::address affine6 = net::ipv6_address{v6("fd77::2")};
constexpr std::uint64_t seconds = 1'000'000'000;

class ipv6_tap : public testing::tap_peer {
 protected:
  // nodad: the kernel's address is usable at once (its own DAD would take
  // a second and is not what is tested).
  ipv6_tap() : tap_peer({.device = "net_tap0", .iface = tap_iface, .kernel_address = "fd77::1/64 nodad", .max_cores = 1}) {}

  // The tap's two ends share a MAC, so a modified EUI-64 would give both
  // the same link-local address (and each side's DAD would find the
  // other's): the stable identifier of RFC 7217 differs.
  // No IPv4 address unless `v4` (an IPv6-only port, as the kernel's side
  // of the link is).
  static stack_config config(std::string_view address, std::uint32_t v4 = 0) {
    stack_config sc;
    sc.address = v4;
    sc.prefix_length = 24;
    sc.ipv6 = {{v6(address), 64}};
    sc.link_local = stack_config::link_local_mode::stable;
    sc.stable_secret = {0x61, 0x66, 0x66, 0x69, 0x6e, 0x65};
    return sc;
  }

  // Until DAD has ended for every address (RFC 4862 5.4: a second after
  // its one probe), or `limit`.
  static bool dad_done(stack& st, std::chrono::milliseconds limit = 5s) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
      bool tentative = false;
      for (const auto& a : st.ipv6_addresses()) tentative |= a.state == ipv6_address_state::tentative;
      if (!tentative) return true;
      if (std::chrono::steady_clock::now() > until) return false;
      this_fiber::sleep_for(20ms);
    }
  }
};

TEST_F(ipv6_tap, KernelPingsTheGlobalAndTheLinkLocalAddress) {
  with_stack(config("fd77::2"), [&](stack& st) {
    ASSERT_TRUE(dad_done(st));
    const auto addresses = st.ipv6_addresses();
    ASSERT_EQ(addresses.size(), 2u);
    for (const auto& a : addresses) EXPECT_EQ(a.state, ipv6_address_state::preferred);
    const std::string link_local = net::ipv6_address{addresses[0].address.address}.to_string();
    testing::kernel_side kernel([&] {
      int rc = std::system("ping -6 -c 3 -i 0.2 -W 2 -q fd77::2 >/dev/null");
      EXPECT_EQ(rc, 0) << "ping -6 fd77::2 failed";
      // From the kernel's link-local address, once its own DAD is done.
      const std::string settled =
          fmt::format("for i in $(seq 50); do ip -6 addr show dev {} scope link tentative | grep -q inet6 || exit 0; "
                      "sleep 0.1; done; exit 1",
                      tap_iface);
      ASSERT_EQ(std::system(settled.c_str()), 0) << "the kernel's link-local address stayed tentative";
      const std::string ll = fmt::format("ping -6 -c 3 -i 0.2 -W 2 -q {}%{} >/dev/null", link_local, tap_iface);
      rc = std::system(ll.c_str());
      EXPECT_EQ(rc, 0) << ll << " failed";
      // The kernel learned our link-layer address by Neighbor Discovery.
      rc = std::system(fmt::format("ip -6 neigh show fd77::2 dev {} | grep -q lladdr", tap_iface).c_str());
      EXPECT_EQ(rc, 0) << "the kernel has no neighbor entry for fd77::2";
    });
    kernel.join();
    EXPECT_GE(st.counters(0).icmp_echo_replies.load(), 6u);
    EXPECT_EQ(st.ipv6_counts().dad_duplicates, 0u);
  });
}

TEST_F(ipv6_tap, DadFindsAnAddressTheKernelHolds) {
  ASSERT_EQ(std::system(fmt::format("ip -6 addr add fd77::3/64 dev {} nodad", tap_iface).c_str()), 0);
  with_stack(config("fd77::3"), [&](stack& st) {
    ASSERT_TRUE(dad_done(st));
    const auto addresses = st.ipv6_addresses();
    ASSERT_EQ(addresses.size(), 2u);
    EXPECT_EQ(addresses[0].state, ipv6_address_state::preferred);  // the link-local one is ours alone
    EXPECT_EQ(addresses[1].state, ipv6_address_state::duplicate);
    EXPECT_EQ(st.ipv6_counts().dad_duplicates, 1u);
    EXPECT_EQ(st.counters(0).ipv6_duplicates.load(), 1u);
  });
}

TEST_F(ipv6_tap, KernelConnectsOverIpv6AndGetsItsBulkEchoedByteForByte) {
  with_stack(config("fd77::2"), [&](stack& st) {
    ASSERT_TRUE(dad_done(st));
    auto l = net::listen({.local = {net::any_address_v6, 7}, .v6_only = true});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    testing::kernel_side kernel([] { testing::kernel_echo_client({affine6, 7}, testing::bulk_bytes(), 6); });
    testing::echo_server(*l, 1);
    kernel.join();
    EXPECT_EQ(st.counters(0).get(layer::tcp, parse_error::bad_checksum), 0u);
  });
}

TEST_F(ipv6_tap, AffineConnectsToAKernelListenerOverIpv6) {
  const std::size_t total = testing::bulk_bytes();
  const int lfd = testing::kernel_listen({net::any_address_v6, 9000});
  ASSERT_GE(lfd, 0) << std::strerror(errno);
  std::size_t got = 0;
  bool same = true;
  with_stack(config("fd77::2"), [&](stack& st) {
    ASSERT_TRUE(dad_done(st));
    testing::kernel_side kernel([&] { got = testing::kernel_bulk_sink(lfd, 7, same); });
    testing::affine_bulk_source({kernel6, 9000}, total, 7);
    kernel.join();
  });
  ::close(lfd);
  EXPECT_EQ(got, total);
  EXPECT_TRUE(same);
}

// A kernel UDP socket on IPv6, bound to `port` (0: any), with a 5 s receive
// timeout.
int kernel_udp6(std::uint16_t port) {
  const int fd = ::socket(AF_INET6, SOCK_DGRAM, 0);
  const auto [a, len] = testing::kernel_address({net::any_address_v6, port});
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), len) != 0) {
    const int why = errno;
    ::close(fd);
    errno = why;
    return -1;
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

TEST_F(ipv6_tap, UdpGoesBothWaysOverIpv6InFragmentsTooAndAClosedPortIsRefused) {
  const int kfd = kernel_udp6(6000);
  ASSERT_GE(kfd, 0) << std::strerror(errno);
  testing::affine_ready bound;
  with_stack(config("fd77::2"), [&](stack& st) {
    ASSERT_TRUE(dad_done(st));
    auto u = net::bind_udp({.local = {net::any_address_v6, 5000}});
    ASSERT_TRUE(u.has_value()) << u.error().message();
    bound.set();
    testing::kernel_side kernel([&] {
      ASSERT_TRUE(bound.wait());
      // The kernel speaks first: a datagram to affine, its answer back.
      const auto [to, len] = testing::kernel_address({affine6, 5000});
      ASSERT_EQ(::sendto(kfd, "ping", 4, 0, reinterpret_cast<const sockaddr*>(&to), len), 4);
      char buf[16];
      ASSERT_EQ(testing::recv_some(kfd, buf, sizeof buf), 4) << std::strerror(errno);
      EXPECT_EQ(std::string(buf, 4), "pong");
      // Then affine speaks first.
      sockaddr_in6 from{};
      socklen_t from_len = sizeof from;
      ssize_t n;
      do n = ::recvfrom(kfd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      while (n < 0 && errno == EINTR);
      ASSERT_EQ(n, 5) << std::strerror(errno);
      EXPECT_EQ(std::string(buf, 5), "hello");
      EXPECT_EQ(std::memcmp(&from.sin6_addr, v6("fd77::2").data(), 16), 0);
      // A datagram larger than the link's MTU: the kernel sends it in
      // fragments (RFC 8200 4.5), which affine reassembles.
      std::vector<char> big(3000);
      for (std::size_t i = 0; i < big.size(); ++i) big[i] = char(i * 7);
      ASSERT_EQ(::sendto(kfd, big.data(), big.size(), 0, reinterpret_cast<const sockaddr*>(&to), len), 3000);
      // A closed port answers with ICMPv6 port unreachable: a connected
      // socket's next receive fails with ECONNREFUSED.
      const int c = ::socket(AF_INET6, SOCK_DGRAM, 0);
      const auto [closed, closed_len] = testing::kernel_address({affine6, 5001});
      ASSERT_EQ(::connect(c, reinterpret_cast<const sockaddr*>(&closed), closed_len), 0);
      timeval tv{5, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ASSERT_EQ(::send(c, "x", 1, 0), 1);
      EXPECT_EQ(testing::recv_some(c, buf, sizeof buf), -1);
      EXPECT_EQ(errno, ECONNREFUSED);
      ::close(c);
    });
    std::array<std::byte, 16> buf{};
    auto got = u->recv_from(buf, now_ns() + 5 * seconds);
    ASSERT_TRUE(got.has_value()) << got.error().message();
    EXPECT_EQ(got->from.addr, kernel6);
    EXPECT_EQ(got->from.port, 6000);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), got->size), "ping");
    ASSERT_TRUE(u->send_to(got->from, std::as_bytes(std::span("pong", 4))).has_value());
    auto other = net::bind_udp({.local = {net::any_address_v6, 0}});
    ASSERT_TRUE(other.has_value());
    ASSERT_TRUE(other->send_to({kernel6, 6000}, std::as_bytes(std::span("hello", 5))).has_value());
    std::vector<std::byte> big(4096);
    auto whole = u->recv_from(big, now_ns() + 5 * seconds);
    ASSERT_TRUE(whole.has_value()) << whole.error().message();
    ASSERT_EQ(whole->size, 3000u);
    for (std::size_t i = 0; i < whole->size; ++i) ASSERT_EQ(big[i], std::byte(i * 7)) << "byte " << i;
    kernel.join();
    EXPECT_GE(st.counters(0).get(drop::udp_no_socket), 1u);
  });
  ::close(kfd);
}

TEST_F(ipv6_tap, ADualStackListenerServesAnIpv4AndAnIpv6ClientAtOnce) {
  ASSERT_EQ(std::system(fmt::format("ip addr add 10.78.0.1/24 dev {}", tap_iface).c_str()), 0);
  with_stack(config("fd77::2", 0x0a4e0002), [&](stack& st) {
    ASSERT_TRUE(dad_done(st));
    auto l = net::listen({.local = {net::any_address_v6, 8}});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    testing::kernel_side kernel([] {
      // Both connected before either is answered: one listener holds both.
      const int four = testing::kernel_connect({net::ipv4_address{0x0a4e0002}, 8});
      ASSERT_GE(four, 0) << "connect to 10.78.0.2:8: " << std::strerror(errno);
      const int six = testing::kernel_connect({affine6, 8});
      ASSERT_GE(six, 0) << "connect to [fd77::2]:8: " << std::strerror(errno);
      for (const int fd : {four, six}) {
        ASSERT_TRUE(testing::write_all(fd, std::as_bytes(std::span("hi", 2))));
        char buf[2];
        EXPECT_EQ(testing::recv_some(fd, buf, 2, MSG_WAITALL), 2);
        ::close(fd);
      }
    });
    std::set<std::string> remotes, locals;
    std::vector<net::tcp_stream> streams;
    for (int i = 0; i < 2; ++i) {
      auto s = l->accept(now_ns() + 10 * seconds);
      ASSERT_TRUE(s.has_value()) << s.error().message();
      remotes.insert(s->remote().addr.to_string());
      locals.insert(s->local().addr.to_string());
      streams.push_back(std::move(*s));
    }
    for (auto& s : streams) {
      std::array<std::byte, 2> buf{};
      auto n = s.read(buf, now_ns() + 10 * seconds);
      ASSERT_TRUE(n.has_value() && *n > 0);
      ASSERT_TRUE(s.write({buf.data(), *n}, now_ns() + 10 * seconds).has_value());
    }
    kernel.join();
    // IPv4 comes as IPv4-mapped addresses, as a kernel dual-stack socket has it.
    EXPECT_EQ(remotes, (std::set<std::string>{"::ffff:10.78.0.1", "fd77::1"}));
    EXPECT_EQ(locals, (std::set<std::string>{"::ffff:10.78.0.2", "fd77::2"}));
  });
}

}  // namespace
}  // namespace affine::stack
