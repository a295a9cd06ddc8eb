// ICMP errors on the wire (issue 20 item 3): a stack on the in-process
// wire with a connection from the test's peer; "fragmentation needed"
// quoting a segment the stack sent makes it send what is in flight again
// in smaller segments at once (under the floor, without DF); one quoting a sequence number not in
// flight, or a connection the stack does not have, changes nothing and is
// counted; one quoting a UDP datagram lowers the path MTU its socket keeps
// to. And the stack's own: a datagram whose reassembly times out is
// answered with Time Exceeded where its first fragment came.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "affine/net.hh"
#include "stack/stack.hh"
#include "stack/wire/endian.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmp.hh"
#include "stack/wire/ipv4.hh"
#include "stack/wire/tcp.hh"
#include "tests/stack/tcp_peer.hh"

namespace affine::stack {
namespace {

using testing::frame, testing::tcp_frame, testing::tcp_of, testing::ipv4_frame, testing::peer_mac, testing::stack_mac;

class icmp_error : public testing::tcp_peer {
 protected:
  icmp_error() : tcp_peer("icmp_error_") {}

  // Destination unreachable with `code` quoting `f`'s IPv4 header and the
  // first 8 bytes after it, its TCP sequence number replaced by `seq` if given.
  static frame unreachable(std::uint8_t code, const frame& f, std::uint16_t mtu, std::optional<std::uint32_t> seq = {}) {
    std::vector<std::byte> quote(f.begin() + 14, f.begin() + 14 + 20 + 8);
    if (seq) store_be32(quote.data() + 20 + 4, *seq);
    std::vector<std::byte> icmp(icmp_view::header_length + quote.size());
    const icmp_message m{.type = icmp_type::dest_unreachable, .code = code, .next_hop_mtu = mtu, .data = quote};
    EXPECT_TRUE(emit_icmp(m, icmp).has_value());
    return ipv4_frame(ip_protocol::icmp, icmp);
  }
  static std::vector<std::pair<std::uint32_t, std::size_t>> data_of(const std::vector<frame>& frames) {
    std::vector<std::pair<std::uint32_t, std::size_t>> out;
    for (const frame& f : frames)
      if (auto t = tcp_of(f); t && !t->payload().empty()) out.emplace_back(t->seq().raw(), t->payload().size());
    return out;
  }
  // A connection from port 40000 (in with_stack's body) that has sent
  // `bytes` bytes: the frames that carried them, the data frames first.
  std::vector<frame> connect_and_send(net::tcp_stream& s, std::size_t bytes) {
    tcp_segment next;
    s = establish(40000, next);
    EXPECT_TRUE(s.is_open());
    const std::vector<std::byte> data(bytes, std::byte{'x'});
    EXPECT_TRUE(s.write(data, now_ns() + 1'000'000'000).has_value());
    std::vector<frame> out = drain();
    std::stable_partition(out.begin(), out.end(), [](const frame& f) {
      auto t = tcp_of(f);
      return t && !t->payload().empty();
    });
    return out;
  }
};

TEST_F(icmp_error, FragmentationNeededResegmentsWhatIsInFlight) {
  with_stack([&](stack& st) {
    net::tcp_stream s;
    const auto sent = connect_and_send(s, 4000);
    const auto first = data_of(sent);
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(first[0].second, 1460u);
    // The first data frame, as a router on a 1000-byte hop would quote it.
    send(unreachable(std::uint8_t(unreachable_code::fragmentation_needed), sent[0], 1000));
    const auto again = data_of(drain());
    ASSERT_FALSE(again.empty());
    EXPECT_EQ(again[0].first, first[0].first);  // from SND.UNA
    std::size_t bytes = 0;
    for (auto [seq, length] : again) {
      EXPECT_LE(length, 960u);  // 1000 less the IPv4 and TCP headers
      bytes += length;
    }
    // Four full segments of the new size at once; the last 160 bytes wait
    // for an ACK (Nagle, RFC 1122 4.2.3.4: the stream is not no_delay).
    EXPECT_EQ(bytes, 3840u);
    EXPECT_EQ(st.counters(0).icmp_errors_taken.load(), 1u);
  });
}

// RFC 5927 7 and Linux's min_pmtu: a next-hop MTU under the floor (552)
// leaves the floor as the estimate, so a forged one cannot make the
// connection crawl; the path is really that narrow, or says so, so what
// goes to it from then on goes without DF, for the narrow hop to fragment.
TEST_F(icmp_error, AnMtuUnderTheFloorKeepsTheFloorAndClearsDontFragment_RFC5927_7) {
  const auto dont_fragment = [](const frame& f) { return ipv4_view::parse(std::span(f).subspan(14))->dont_fragment(); };
  with_stack([&](stack&) {
    net::tcp_stream s;
    const auto sent = connect_and_send(s, 4000);
    ASSERT_FALSE(data_of(sent).empty());
    for (const frame& f : sent) EXPECT_TRUE(dont_fragment(f));
    send(unreachable(std::uint8_t(unreachable_code::fragmentation_needed), sent[0], 296));
    const auto out = drain();
    const auto again = data_of(out);
    ASSERT_FALSE(again.empty());
    for (auto [seq, length] : again) EXPECT_EQ(length, 512u);  // 552 less the IPv4 and TCP headers
    for (const frame& f : out) EXPECT_FALSE(dont_fragment(f));
  });
}

TEST_F(icmp_error, AQuoteOutOfFlightOrOfNoConnectionChangesNothing) {
  with_stack([&](stack& st) {
    net::tcp_stream s;
    const auto sent = connect_and_send(s, 1000);
    ASSERT_EQ(data_of(sent).size(), 1u);
    const frame& f = sent[0];
    const std::uint32_t seq = tcp_of(f)->seq().raw();
    send(unreachable(std::uint8_t(unreachable_code::fragmentation_needed), f, 600, seq + 5000));
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(st.counters(0).get(drop::icmp_out_of_window), 1u);
    // Another port: no such connection.
    frame other = f;
    store_be16(other.data() + 14 + 20, 40001);
    send(unreachable(std::uint8_t(unreachable_code::port), other, 0));
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(st.counters(0).get(drop::icmp_ignored), 1u);
    EXPECT_EQ(st.counters(0).icmp_errors_taken.load(), 0u);
  });
}

// RFC 1191 for datagrams: the stack sends every UDP datagram with DF and
// never fragments it, so "fragmentation needed" quoting one lowers that
// path's MTU, and the socket's next datagram past it is message_size (as a
// Linux socket with IP_PMTUDISC_DO); one that fits still goes. A quote of a
// port nobody bound here changes nothing.
TEST_F(icmp_error, FragmentationNeededForADatagramLowersThePathMtuItsSocketKeepsTo_RFC1191) {
  with_stack([&](stack& st) {
    auto b = st.backend().bind_udp({.local = {net::any_address, 5353}});
    ASSERT_TRUE(b.has_value());
    net::udp_socket u(std::move(*b));
    const std::vector<std::byte> data(1000, std::byte{'u'});
    const net::endpoint to{net::ipv4_address{testing::peer_ip}, 40000};
    ASSERT_TRUE(u.send_to(to, data).has_value());
    const auto sent = drain();
    ASSERT_EQ(sent.size(), 1u);
    ASSERT_EQ(sent[0].size(), 14u + 20 + 8 + 1000);
    const auto fragmentation_needed = std::uint8_t(unreachable_code::fragmentation_needed);

    frame other = sent[0];
    store_be16(other.data() + 14 + 20, 5354);  // its source port: bound by nobody
    send(unreachable(fragmentation_needed, other, 576));
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(st.counters(0).get(drop::icmp_ignored), 1u);
    ASSERT_TRUE(u.send_to(to, data).has_value());
    EXPECT_EQ(drain().size(), 1u);

    send(unreachable(fragmentation_needed, sent[0], 576));
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(st.counters(0).icmp_errors_taken.load(), 1u);
    const auto r = u.send_to(to, data);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), std::errc::message_size);
    EXPECT_EQ(u.send_to(to, std::span(data).first(576 - 28 + 1)).error(), std::errc::message_size);
    ASSERT_TRUE(u.send_to(to, std::span(data).first(576 - 28)).has_value());
    const auto fits = drain();
    ASSERT_EQ(fits.size(), 1u);
    EXPECT_EQ(fits[0].size(), 14u + 576);
    u.close();
  });
}

// Bytes [offset, offset + len) of a UDP datagram's payload `whole`, as an
// IPv4 fragment from the peer with identification `id`.
frame udp_fragment(std::span<const std::byte> whole, std::uint16_t id, std::size_t offset, std::size_t len,
                   bool more) {
  frame f(14 + 20 + len);
  (void)emit_ethernet({.dst = stack_mac, .src = peer_mac, .type = ether_type::ipv4}, f);
  const ipv4_header h{.src = testing::peer_ip, .dst = testing::stack_ip, .protocol = ip_protocol::udp, .id = id,
                      .more_fragments = more, .fragment_offset = std::uint16_t(offset),
                      .payload_length = std::uint16_t(len)};
  (void)emit_ipv4(h, std::span(f).subspan(14), checksum_mode::software);
  std::copy_n(whole.begin() + std::ptrdiff_t(offset), len, f.begin() + 34);
  return f;
}

// RFC 792, RFC 1122 3.3.2: a datagram not whole within the reassembly time
// is dropped and counted; where its first fragment came, its source gets
// Time Exceeded, code 1 (fragment reassembly time exceeded), quoting that
// fragment's header and first 8 bytes; where only a later one came,
// nothing ("If fragment zero is not available then no time exceeded need
// be sent at all").
TEST_F(icmp_error, AnExpiredReassemblyIsAnsweredWithTimeExceededWhereItsFirstFragmentCame) {
  with_stack(
      [&](stack& st) {
        std::vector<std::byte> datagram(8 + 24);  // a UDP header and 24 bytes
        for (std::size_t i = 0; i < datagram.size(); ++i) datagram[i] = std::byte(i + 1);
        const frame first = udp_fragment(datagram, 7, 0, 16, true);
        send(first);
        send(udp_fragment(datagram, 8, 16, 16, false));  // another datagram's last fragment
        std::vector<frame> out;
        for (int i = 0; i < 100 && st.counters(0).get(drop::fragment_timeout) < 2; ++i)
          for (frame& f : drain()) out.push_back(std::move(f));
        for (frame& f : drain()) out.push_back(std::move(f));
        EXPECT_EQ(st.counters(0).get(drop::fragment_timeout), 2u);
        std::vector<icmp_message> got;
        std::vector<std::byte> quoted;
        for (const frame& f : out) {
          auto ip = ipv4_view::parse(ethernet_view::parse(f)->payload());
          if (!ip || ip->header().protocol != ip_protocol::icmp) continue;
          EXPECT_EQ(ip->header().dst, testing::peer_ip);
          auto v = icmp_view::parse(ip->payload());
          ASSERT_TRUE(v.has_value());
          got.push_back(v->message());
          quoted.assign(v->data().begin(), v->data().end());
        }
        ASSERT_EQ(got.size(), 1u) << "one Time Exceeded, for the datagram whose first fragment came";
        EXPECT_EQ(got[0].type, icmp_type::time_exceeded);
        EXPECT_EQ(got[0].code, std::uint8_t(time_exceeded_code::reassembly));
        ASSERT_GE(quoted.size(), 20u + 8u);
        EXPECT_TRUE(std::ranges::equal(std::span(quoted).first(20 + 8), std::span(first).subspan(14, 20 + 8)));
      },
      [](stack_config& sc) { sc.reassembly.timeout_ns = 30'000'000; });
}

}  // namespace
}  // namespace affine::stack
