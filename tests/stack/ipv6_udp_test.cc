// UDP over IPv6 on the stack over the in-process wire: the path MTU from
// Packet Too Big (RFC 8201). Teardown checks that every mbuf came back.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/stack/ipv6_peer.hh"

namespace affine::stack {
namespace {

using namespace testing;

// RFC 8201 for datagrams: the stack never fragments (RFC 8200 5 leaves
// that to the source; a datagram the path cannot carry is the sender's
// error), so a Packet Too Big quoting a datagram one of its sockets sent
// lowers the path MTU, and that socket's next datagram past it is
// message_size (as a Linux socket with IPV6_DONTFRAG); one that fits goes.
// A Packet Too Big under the IPv6 minimum leaves 1280 (RFC 8201 4).
TEST_F(ipv6_input, PacketTooBigForADatagramLowersThePathMtuItsSocketKeepsTo) {
  with_v6([&](stack& st) {
    (void)introduce_peer();
    auto b = st.backend().bind_udp({.local = {net::any_address_v6, 5353}});
    ASSERT_TRUE(b.has_value()) << b.error().message();
    net::udp_socket u(std::move(*b));
    const std::vector<std::byte> data(1400, std::byte{'u'});
    const net::endpoint to{net::ipv6_address{peer}, 40000};
    ASSERT_TRUE(u.send_to(to, data).has_value());
    const auto sent = drain();
    ASSERT_EQ(sent.size(), 1u);
    ASSERT_EQ(sent[0].size(), 14u + 40 + 8 + 1400);
    // A router on a narrower hop quotes it (as much as fits, RFC 4443 2.4(c)).
    const auto too_big = [&](std::uint32_t mtu) {
      const auto quoted = std::span<const std::byte>(sent[0]).subspan(14, 1232);
      std::vector<std::byte> ptb(8 + quoted.size());
      const ipv6_bytes router = v6("fd77::99");
      (void)emit_icmpv6({.type = icmpv6_type::packet_too_big, .mtu = mtu, .data = quoted}, router, ours, ptb);
      frame f = ipv6_frame(next_header::icmpv6, ptb);
      std::memcpy(f.data() + 14 + 8, router.data(), 16);
      send(f);
      return drain();
    };
    EXPECT_TRUE(too_big(1000).empty());
    ASSERT_TRUE(u.send_to(to, data).has_value()) << "a Packet Too Big under 1280 lowered the path MTU";
    EXPECT_EQ(drain().size(), 1u);

    EXPECT_TRUE(too_big(1300).empty());
    EXPECT_EQ(st.counters(0).icmp_errors_taken.load(), 2u);
    const auto r = u.send_to(to, data);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), std::errc::message_size);
    EXPECT_EQ(u.send_to(to, std::span(data).first(1300 - 48 + 1)).error(), std::errc::message_size);
    ASSERT_TRUE(u.send_to(to, std::span(data).first(1300 - 48)).has_value());
    const auto fits = drain();
    ASSERT_EQ(fits.size(), 1u);
    EXPECT_EQ(fits[0].size(), 14u + 1300);
    u.close();
  });
}

}  // namespace
}  // namespace affine::stack
