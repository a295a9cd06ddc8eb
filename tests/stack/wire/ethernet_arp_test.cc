#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "stack/wire/arp.hh"
#include "stack/wire/ethernet.hh"
#include "tests/stack/wire/frames.hh"

namespace affine::stack {
namespace {

using test::bytes_of;

constexpr mac_address host_a{0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
constexpr mac_address host_b{0x52, 0x54, 0x00, 0xab, 0xcd, 0xef};

TEST(Ethernet, ParsesCapturedFrame) {
  const auto frame = test::from_hex(test::tcp_syn_hex);
  const auto v = ethernet_view::parse(frame);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->dst(), mac_address{});
  EXPECT_EQ(v->type(), ether_type::ipv4);
  EXPECT_FALSE(v->vlan());
  EXPECT_EQ(v->header_length(), 14u);
  EXPECT_EQ(v->payload().data(), frame.data() + 14);
  EXPECT_EQ(v->payload().size(), frame.size() - 14);
}

TEST(Ethernet, UntaggedRoundTrip) {
  const ethernet_header h{.dst = broadcast_mac, .src = host_a, .type = ether_type::arp};
  std::array<std::byte, 14> buf{};
  ASSERT_EQ(emit_ethernet(h, buf), 14u);
  EXPECT_EQ(std::vector(buf.begin(), buf.end()),
            bytes_of({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x08, 0x06}));
  const auto v = ethernet_view::parse(buf);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header(), h);
  EXPECT_TRUE(v->payload().empty());
}

TEST(Ethernet, VlanTagIsParsedAndExposed) {
  const ethernet_header h{.dst = host_b,
                          .src = host_a,
                          .type = ether_type::ipv4,
                          .vlan = vlan_tag{.priority = 5, .drop_eligible = true, .id = 0xabc}};
  std::array<std::byte, 20> buf{};
  ASSERT_EQ(emit_ethernet(h, buf), 18u);
  // TPID 0x8100, then TCI: PCP 5 (101), DEI 1, VID 0xabc.
  EXPECT_EQ(buf[12], std::byte{0x81});
  EXPECT_EQ(buf[13], std::byte{0x00});
  EXPECT_EQ(buf[14], std::byte{0xba});
  EXPECT_EQ(buf[15], std::byte{0xbc});
  const auto v = ethernet_view::parse(buf);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header(), h);
  EXPECT_EQ(v->header_length(), 18u);
  EXPECT_EQ(v->payload().size(), 2u);
}

TEST(Ethernet, ShorterThanHeaderIsTruncated) {
  std::array<std::byte, 14> buf{};
  EXPECT_EQ(ethernet_view::parse(std::span(buf).first(13)).error(), parse_error::truncated);
  EXPECT_EQ(ethernet_view::parse({}).error(), parse_error::truncated);
}

TEST(Ethernet, TaggedFrameEndingInsideTheTagIsTruncated) {
  std::array<std::byte, 18> buf{};
  ASSERT_TRUE(emit_ethernet({.type = ether_type::ipv4, .vlan = vlan_tag{.id = 7}}, buf));
  EXPECT_TRUE(ethernet_view::parse(buf));
  EXPECT_EQ(ethernet_view::parse(std::span(buf).first(17)).error(), parse_error::truncated);
  EXPECT_EQ(ethernet_view::parse(std::span(buf).first(15)).error(), parse_error::truncated);
}

TEST(Ethernet, StackedTagsAreUnsupported) {
  std::array<std::byte, 22> buf{};
  ASSERT_TRUE(emit_ethernet({.type = ether_type::vlan, .vlan = vlan_tag{.id = 7}}, buf));
  EXPECT_EQ(ethernet_view::parse(buf).error(), parse_error::unsupported);
  // An 802.1ad service tag outside: QinQ.
  buf[12] = std::byte{0x88};
  buf[13] = std::byte{0xa8};
  EXPECT_EQ(ethernet_view::parse(buf).error(), parse_error::unsupported);
}

TEST(Ethernet, EmitIntoTooSmallBufferFails) {
  std::array<std::byte, 17> buf{};
  EXPECT_EQ(emit_ethernet({.type = ether_type::ipv4}, std::span(buf).first(13)).error(), emit_error::buffer_too_small);
  EXPECT_EQ(emit_ethernet({.type = ether_type::ipv4, .vlan = vlan_tag{}}, buf).error(), emit_error::buffer_too_small);
}

// A who-has 10.0.2.2 from 10.0.2.1, laid out as RFC 826 gives it.
const std::vector<std::byte> arp_request_bytes =
    bytes_of({0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56,
              0x0a, 0x00, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x02, 0x02});
const arp_packet arp_request{.op = arp_op::request,
                             .sender_mac = host_a,
                             .sender_ip = 0x0a000201,
                             .target_mac = {},
                             .target_ip = 0x0a000202};

TEST(Arp, EmitWritesRfc826Layout) {
  std::array<std::byte, 28> buf{};
  ASSERT_EQ(emit_arp(arp_request, buf), 28u);
  EXPECT_EQ(std::vector(buf.begin(), buf.end()), arp_request_bytes);
}

TEST(Arp, ParsesRequestAndIgnoresEthernetPadding) {
  auto bytes = arp_request_bytes;
  bytes.resize(46);  // padded to the 60-byte minimum frame
  const auto v = arp_view::parse(bytes);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->packet(), arp_request);
}

TEST(Arp, ReplyRoundTrip) {
  const arp_packet reply{.op = arp_op::reply,
                         .sender_mac = host_b,
                         .sender_ip = 0x0a000202,
                         .target_mac = host_a,
                         .target_ip = 0x0a000201};
  std::array<std::byte, 28> buf{};
  ASSERT_TRUE(emit_arp(reply, buf));
  const auto v = arp_view::parse(buf);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->op(), arp_op::reply);
  EXPECT_EQ(v->sender_mac(), host_b);
  EXPECT_EQ(v->sender_ip(), 0x0a000202u);
  EXPECT_EQ(v->target_mac(), host_a);
  EXPECT_EQ(v->target_ip(), 0x0a000201u);
  EXPECT_EQ(v->packet(), reply);
}

TEST(Arp, ShortPacketIsTruncated) {
  EXPECT_EQ(arp_view::parse(std::span(arp_request_bytes).first(27)).error(), parse_error::truncated);
  EXPECT_EQ(arp_view::parse({}).error(), parse_error::truncated);
}

TEST(Arp, AnythingButEthernetIpv4RequestOrReplyIsUnsupported) {
  struct field_change {
    std::size_t offset;
    int value;
  };
  for (const auto [offset, value] : {field_change{1, 6},       // hardware type IEEE 802
                                     field_change{2, 0x86},    // protocol IPv6
                                     field_change{4, 8},       // hardware length
                                     field_change{5, 16},      // protocol length
                                     field_change{7, 3},       // RARP request
                                     field_change{7, 0}}) {
    auto bytes = arp_request_bytes;
    bytes[offset] = std::byte(value);
    EXPECT_EQ(arp_view::parse(bytes).error(), parse_error::unsupported) << "byte " << offset << " = " << value;
  }
}

TEST(Arp, EmitIntoTooSmallBufferFails) {
  std::array<std::byte, 27> buf{};
  EXPECT_EQ(emit_arp(arp_request, buf).error(), emit_error::buffer_too_small);
}

}  // namespace
}  // namespace affine::stack
