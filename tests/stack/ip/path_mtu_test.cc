// The path-MTU cache (RFC 1191): lowered by ICMP "fragmentation needed",
// never raised by one, never under 68 nor over the interface MTU, floored at
// 552 like Linux's min_pmtu, forgotten after 10 minutes, bounded.

#include <gtest/gtest.h>

#include "stack/ip/route.hh"

namespace affine::stack {
namespace {

constexpr std::uint64_t sec = 1'000'000'000;
constexpr std::uint32_t dst_a = 0x08080808;
constexpr std::uint32_t dst_b = 0x08080404;
constexpr std::uint32_t dst_c = 0x01010101;

TEST(path_mtu, UnknownDestinationGetsTheInterfaceMtu) {
  const path_mtu_cache c;
  EXPECT_EQ(c.path_mtu(dst_a, 0), 1500u);
  EXPECT_FALSE(c.may_fragment(dst_a, 0));
}

TEST(path_mtu, Rfc1191FragmentationNeededLowersTheEstimateForThatDestinationOnly) {
  path_mtu_cache c;
  EXPECT_TRUE(c.on_frag_needed(dst_a, 1400, 0));
  EXPECT_EQ(c.path_mtu(dst_a, 0), 1400u);
  EXPECT_EQ(c.path_mtu(dst_b, 0), 1500u);
  EXPECT_TRUE(c.on_frag_needed(dst_a, 1280, 1 * sec));
  EXPECT_EQ(c.path_mtu(dst_a, 1 * sec), 1280u);
  EXPECT_EQ(c.counts().lowered, 2u);
}

TEST(path_mtu, Rfc1191DatagramTooBigNeverRaisesTheEstimate) {
  path_mtu_cache c;
  c.on_frag_needed(dst_a, 1400, 0);
  EXPECT_FALSE(c.on_frag_needed(dst_a, 1450, 1 * sec));
  EXPECT_FALSE(c.on_frag_needed(dst_a, 1400, 1 * sec));
  EXPECT_EQ(c.path_mtu(dst_a, 1 * sec), 1400u);
  EXPECT_EQ(c.counts().not_lower, 2u);
}

TEST(path_mtu, NextHopMtuAboveTheInterfaceMtuChangesNothing) {
  path_mtu_cache c;
  EXPECT_FALSE(c.on_frag_needed(dst_a, 9000, 0));
  EXPECT_EQ(c.path_mtu(dst_a, 0), 1500u);
  EXPECT_EQ(c.size(), 0u);
}

TEST(path_mtu, Rfc1191NextHopMtuUnder68IsIgnored) {
  path_mtu_cache c;
  EXPECT_FALSE(c.on_frag_needed(dst_a, 0, 0));  // a router from before RFC 1191
  EXPECT_FALSE(c.on_frag_needed(dst_a, 67, 0));
  EXPECT_EQ(c.path_mtu(dst_a, 0), 1500u);
  EXPECT_EQ(c.counts().below_min, 2u);
}

TEST(path_mtu, NextHopMtuUnderTheFloorIsRaisedToItAndDfIsCleared) {
  path_mtu_cache c;
  EXPECT_TRUE(c.on_frag_needed(dst_a, 68, 0));
  EXPECT_EQ(c.path_mtu(dst_a, 0), 552u);
  EXPECT_TRUE(c.may_fragment(dst_a, 0));
  EXPECT_EQ(c.counts().floor_clamped, 1u);
}

TEST(path_mtu, ReportUnderTheFloorAfterOneAtTheFloorClearsDf) {
  path_mtu_cache c;
  c.on_frag_needed(dst_a, 552, 0);
  EXPECT_FALSE(c.may_fragment(dst_a, 0));
  EXPECT_TRUE(c.on_frag_needed(dst_a, 300, 1 * sec));
  EXPECT_EQ(c.path_mtu(dst_a, 1 * sec), 552u);
  EXPECT_TRUE(c.may_fragment(dst_a, 1 * sec));
  EXPECT_FALSE(c.on_frag_needed(dst_a, 200, 2 * sec));  // already known that narrow
}

TEST(path_mtu, FloorIsNeverAboveTheInterfaceMtu) {
  path_mtu_cache c({.interface_mtu = 500});
  EXPECT_TRUE(c.on_frag_needed(dst_a, 100, 0));
  EXPECT_EQ(c.path_mtu(dst_a, 0), 500u);
  EXPECT_TRUE(c.may_fragment(dst_a, 0));
}

TEST(path_mtu, Rfc1191EstimateIsForgottenAfterTenMinutes) {
  path_mtu_cache c;
  c.on_frag_needed(dst_a, 1400, 10 * sec);
  EXPECT_EQ(c.next_deadline(), 610 * sec);
  EXPECT_EQ(c.path_mtu(dst_a, 610 * sec - 1), 1400u);
  EXPECT_EQ(c.path_mtu(dst_a, 610 * sec), 1500u);
  EXPECT_EQ(c.expire(610 * sec - 1), 0u);
  EXPECT_EQ(c.expire(610 * sec), 1u);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.next_deadline(), path_mtu_cache::no_deadline);
  EXPECT_EQ(c.counts().expired, 1u);
}

TEST(path_mtu, ExpiredEstimateMayBeLearntAgainHigher) {
  path_mtu_cache c;
  c.on_frag_needed(dst_a, 1000, 0);
  EXPECT_TRUE(c.on_frag_needed(dst_a, 1400, 600 * sec));  // the old one has run out
  EXPECT_EQ(c.path_mtu(dst_a, 600 * sec), 1400u);
}

TEST(path_mtu, FullCacheForgetsTheOldestEstimate) {
  path_mtu_cache c({.capacity = 2});
  c.on_frag_needed(dst_a, 1400, 1 * sec);
  c.on_frag_needed(dst_b, 1400, 2 * sec);
  c.on_frag_needed(dst_c, 1400, 3 * sec);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.path_mtu(dst_a, 3 * sec), 1500u);
  EXPECT_EQ(c.path_mtu(dst_b, 3 * sec), 1400u);
  EXPECT_EQ(c.path_mtu(dst_c, 3 * sec), 1400u);
  EXPECT_EQ(c.counts().evicted, 1u);
}

}  // namespace
}  // namespace affine::stack
