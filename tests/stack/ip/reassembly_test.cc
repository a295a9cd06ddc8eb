// IPv4 reassembly: RFC 791 3.2 with RFC 815's holes, overlaps dropping the
// whole datagram (RFC 5722), and every bound (slots, memory, holes, time,
// 65535 bytes) hit and counted. Teardown checks that nothing is held.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "stack/flow.hh"
#include "stack/ip/reassembly.hh"

namespace affine::stack {
namespace {

constexpr std::uint64_t sec = 1'000'000'000;
constexpr fragment_key key{.src = v4_flow(0x0a000001), .dst = v4_flow(0x0a000002), .id = 77, .protocol = 17};

// A payload whose every byte says where it was, so a misplaced fragment shows.
std::vector<std::byte> datagram(std::size_t n) {
  std::vector<std::byte> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = std::byte((i * 131 + i / 256) & 0xff);
  return d;
}

class reassembly_test : public ::testing::Test {
 protected:
  void make(const reassembly_config& config) { r_.emplace(config); }
  reassembly& r() {
    if (!r_) r_.emplace();
    return *r_;
  }

  // The fragment [offset, offset + len) of `data`; MF set unless it ends the datagram.
  reassembly_result frag(const std::vector<std::byte>& data, std::uint32_t offset, std::uint32_t len,
                         std::uint64_t now = 0, const fragment_key& k = key) {
    return r().add(k, offset, offset + len < data.size(), std::span(data).subspan(offset, len), now);
  }

  static void expect_dropped(const reassembly_result& res, reassembly_drop reason) {
    EXPECT_EQ(res.status, reassembly_status::dropped);
    EXPECT_EQ(res.reason, reason) << to_string(res.reason);
  }
  // Checks the datagram, then hands its slot back as a consumer would.
  void expect_whole(const reassembly_result& res, const std::vector<std::byte>& data) {
    ASSERT_EQ(res.status, reassembly_status::complete);
    EXPECT_TRUE(std::ranges::equal(res.payload, data));
    r().release(res.slot);
  }

  void TearDown() override {
    r().expire(reassembly::no_deadline - 1);
    EXPECT_EQ(r().in_progress(), 0u);
    EXPECT_EQ(r().held_bytes(), 0u);
  }

 private:
  std::optional<reassembly> r_;
};

TEST_F(reassembly_test, InOrderFragmentsMakeTheDatagram) {
  const auto d = datagram(3000);
  EXPECT_EQ(frag(d, 0, 1480).status, reassembly_status::incomplete);
  EXPECT_EQ(frag(d, 1480, 1480).status, reassembly_status::incomplete);
  expect_whole(frag(d, 2960, 40), d);
  EXPECT_EQ(r().counts().completed, 1u);
  EXPECT_EQ(r().counts().fragments, 3u);
}

TEST_F(reassembly_test, OutOfOrderFragmentsMakeTheDatagram) {
  const auto d = datagram(3000);
  EXPECT_EQ(frag(d, 2960, 40).status, reassembly_status::incomplete);
  EXPECT_EQ(frag(d, 0, 1480).status, reassembly_status::incomplete);
  expect_whole(frag(d, 1480, 1480), d);
}

TEST_F(reassembly_test, Rfc791LastFragmentSetsTheLength) {
  const auto d = datagram(1000);
  EXPECT_EQ(frag(d, 992, 8).status, reassembly_status::incomplete);
  // Contiguous data from 0 without the last fragment is not a datagram.
  EXPECT_EQ(frag(d, 0, 496).status, reassembly_status::incomplete);
  expect_whole(frag(d, 496, 496), d);
}

TEST_F(reassembly_test, ExactDuplicateIsDroppedAloneAndTheDatagramStillCompletes) {
  const auto d = datagram(2000);
  frag(d, 0, 1000);
  expect_dropped(frag(d, 0, 1000), reassembly_drop::duplicate);
  expect_whole(frag(d, 1000, 1000), d);
  EXPECT_EQ(r().counts().of(reassembly_drop::duplicate), 1u);
}

TEST_F(reassembly_test, FragmentWhollyInsideReceivedDataIsADuplicate) {
  const auto d = datagram(2000);
  frag(d, 0, 800);
  frag(d, 800, 800);
  expect_dropped(frag(d, 400, 800), reassembly_drop::duplicate);
  expect_whole(frag(d, 1600, 400), d);
}

TEST_F(reassembly_test, Rfc5722OverlapDropsTheWholeDatagram) {
  const auto d = datagram(2000);
  frag(d, 0, 1000);
  expect_dropped(frag(d, 496, 1000), reassembly_drop::overlap);
  EXPECT_EQ(r().in_progress(), 0u);
  EXPECT_EQ(r().held_bytes(), 0u);
  // What follows starts a new datagram that lacks its beginning.
  EXPECT_EQ(frag(d, 1000, 1000).status, reassembly_status::incomplete);
  EXPECT_EQ(r().counts().of(reassembly_drop::overlap), 1u);
}

TEST_F(reassembly_test, Rfc791NonLastFragmentMustCarryAMultipleOf8Bytes) {
  const auto d = datagram(2000);
  expect_dropped(frag(d, 0, 1001), reassembly_drop::bad_length);
  expect_dropped(r().add(key, 4, true, std::span(d).subspan(0, 8), 0), reassembly_drop::bad_length);
  expect_dropped(r().add(key, 8, false, {}, 0), reassembly_drop::bad_length);
  EXPECT_EQ(r().in_progress(), 0u);
  EXPECT_EQ(r().counts().of(reassembly_drop::bad_length), 3u);
}

TEST_F(reassembly_test, DatagramOf65535BytesIsTheLargest) {
  const auto d = datagram(65535);
  EXPECT_EQ(frag(d, 0, 65528).status, reassembly_status::incomplete);
  expect_whole(frag(d, 65528, 7), d);
}

TEST_F(reassembly_test, FragmentEndingPast65535IsTooBig) {
  const auto d = datagram(65536);
  expect_dropped(r().add(key, 65528, false, std::span(d).subspan(0, 8), 0), reassembly_drop::too_big);
  expect_dropped(r().add(key, 0, true, d, 0), reassembly_drop::too_big);
  EXPECT_EQ(r().counts().of(reassembly_drop::too_big), 2u);
}

TEST_F(reassembly_test, Rfc1122IncompleteDatagramTimesOutAfterThirtySeconds) {
  const auto d = datagram(2000);
  frag(d, 0, 1000, 5 * sec);
  EXPECT_EQ(r().next_deadline(), 35 * sec);
  EXPECT_EQ(r().expire(35 * sec - 1), 0u);
  EXPECT_EQ(r().expire(35 * sec), 1u);
  EXPECT_EQ(r().in_progress(), 0u);
  EXPECT_EQ(r().held_bytes(), 0u);
  EXPECT_EQ(r().counts().of(reassembly_drop::timeout), 1u);
  EXPECT_EQ(r().next_deadline(), reassembly::no_deadline);
}

TEST_F(reassembly_test, Rfc8200Ipv6DatagramTimesOutAfterSixtySeconds) {
  const auto d = datagram(2000);
  fragment_key v6 = key;
  v6.src[10] = v6.src[11] = 0;  // no longer IPv4-mapped
  v6.src[0] = 0xfd;
  frag(d, 0, 1000, 5 * sec, v6);
  EXPECT_EQ(r().next_deadline(), 65 * sec);
  EXPECT_EQ(r().expire(65 * sec - 1), 0u);
  EXPECT_EQ(r().expire(65 * sec), 1u);
}

TEST_F(reassembly_test, FragmentAfterTheTimeoutStartsAfreshBeforeExpireRuns) {
  const auto d = datagram(2000);
  frag(d, 0, 1000, 0);
  EXPECT_EQ(frag(d, 1000, 1000, 30 * sec).status, reassembly_status::incomplete);
  EXPECT_EQ(r().counts().of(reassembly_drop::timeout), 1u);
  EXPECT_EQ(r().held_bytes(), 1000u);
}

// RFC 792, RFC 8200 4.5: the Time Exceeded message of an expiry quotes the
// first fragment, so the slot keeps its headers; expire() hands that
// fragment back as it came, headers and payload, whenever it came.
TEST_F(reassembly_test, ExpiryHandsBackTheFirstFragmentAsItCame) {
  const auto d = datagram(3000);
  const auto headers = datagram(28);  // an IPv4 header with options, say
  EXPECT_EQ(frag(d, 2000, 1000).status, reassembly_status::incomplete);
  EXPECT_EQ(r().add(key, 0, true, std::span(d).first(1000), 0, headers).status, reassembly_status::incomplete);
  std::vector<std::byte> got;
  std::uint32_t calls = 0;
  EXPECT_EQ(r().expire(30 * sec, [&](const fragment_key& k, std::span<const std::byte> first) {
    ++calls;
    EXPECT_EQ(k, key);
    got.assign(first.begin(), first.end());
  }), 1u);
  ASSERT_EQ(calls, 1u);
  std::vector<std::byte> want(headers);
  want.insert(want.end(), d.begin(), d.begin() + 1000);
  EXPECT_TRUE(std::ranges::equal(got, want));
}

// Without its first fragment, an expiry has nothing to quote (RFC 792: "If
// fragment zero is not available then no time exceeded need be sent at
// all"); nor with headers past what a slot keeps.
TEST_F(reassembly_test, ExpiryWithoutTheFirstFragmentHandsBackNothing) {
  const auto d = datagram(3000);
  const fragment_key other{.src = v4_flow(0x0a000001), .dst = v4_flow(0x0a000002), .id = 78, .protocol = 17};
  EXPECT_EQ(frag(d, 1000, 1000).status, reassembly_status::incomplete);
  const std::vector<std::byte> long_headers(reassembly::max_first_headers + 8);
  EXPECT_EQ(r().add(other, 0, true, std::span(d).first(1000), 0, long_headers).status, reassembly_status::incomplete);
  std::uint32_t calls = 0;
  EXPECT_EQ(r().expire(30 * sec, [&](const fragment_key&, std::span<const std::byte>) { ++calls; }), 2u);
  EXPECT_EQ(calls, 0u);
  EXPECT_EQ(r().counts().of(reassembly_drop::timeout), 2u);
}

TEST_F(reassembly_test, MemoryCapDropsTheDatagramThatWouldPassIt) {
  make({.memory_cap = 2048});
  const auto d = datagram(3000);
  constexpr fragment_key other{.src = v4_flow(1), .dst = v4_flow(2), .id = 3, .protocol = 6};
  frag(d, 0, 1480);
  frag(d, 0, 496, 0, other);
  expect_dropped(frag(d, 1480, 1480), reassembly_drop::memory_cap);
  EXPECT_EQ(r().held_bytes(), 496u);
  EXPECT_EQ(r().counts().of(reassembly_drop::memory_cap), 1u);
}

TEST_F(reassembly_test, IpFamiliesNeverShareADatagram) {
  // IPv6's key (RFC 8200 4.5) with IPv4's address bits, identification
  // and protocol 0: another datagram, never joined with the IPv4 one.
  const auto d = datagram(2000);
  fragment_key v6{.id = 77};
  v6.src[15] = 1;
  v6.dst[15] = 2;
  const fragment_key v4{.src = v4_flow(1), .dst = v4_flow(2), .id = 77, .protocol = 0};
  EXPECT_EQ(frag(d, 0, 1000, 0, v4).status, reassembly_status::incomplete);
  EXPECT_EQ(frag(d, 1000, 1000, 0, v6).status, reassembly_status::incomplete);
  EXPECT_EQ(r().in_progress(), 2u);
  expect_whole(frag(d, 1000, 1000, 0, v4), d);
  expect_whole(frag(d, 0, 1000, 0, v6), d);
}

TEST_F(reassembly_test, AllSlotsBusyDropsANewDatagramsFragment) {
  make({.slots = 2});
  const auto d = datagram(2000);
  frag(d, 0, 1000, 0, {.id = 1});
  frag(d, 0, 1000, 0, {.id = 2});
  expect_dropped(frag(d, 0, 1000, 0, {.id = 3}), reassembly_drop::no_slot);
  EXPECT_EQ(frag(d, 1000, 1000, 0, {.id = 2}).status, reassembly_status::complete);
  // The complete slot is free again once the next add() runs.
  EXPECT_EQ(frag(d, 0, 1000, 0, {.id = 3}).status, reassembly_status::incomplete);
}

TEST_F(reassembly_test, SecondLastFragmentWithAnotherEndDropsTheDatagram) {
  const auto d = datagram(2000);
  frag(d, 1000, 1000);
  expect_dropped(r().add(key, 0, false, std::span(d).subspan(0, 504), 0), reassembly_drop::end_mismatch);
  EXPECT_EQ(r().in_progress(), 0u);
}

TEST_F(reassembly_test, DataPastTheEndDropsTheDatagram) {
  const auto d = datagram(2000);
  frag(d, 1000, 1000);  // the last fragment: the end is 2000
  expect_dropped(r().add(key, 1992, true, std::span(d).subspan(0, 16), 0), reassembly_drop::end_mismatch);
  frag(d, 0, 1000);     // data up to 1000 ...
  expect_dropped(r().add(key, 0, false, std::span(d).subspan(0, 504), 0), reassembly_drop::end_mismatch);
  EXPECT_EQ(r().counts().of(reassembly_drop::end_mismatch), 2u);
}

TEST_F(reassembly_test, Rfc815TooManyHolesDropsTheDatagram) {
  make({.max_holes = 2});
  const auto d = datagram(200);
  EXPECT_EQ(frag(d, 16, 8).status, reassembly_status::incomplete);  // holes [0,16) [24,inf)
  expect_dropped(frag(d, 48, 8), reassembly_drop::too_many_holes);  // would be three
}

TEST_F(reassembly_test, CompletePayloadStaysUntilReleased) {
  const auto d = datagram(1000);
  frag(d, 0, 496);
  const reassembly_result res = frag(d, 496, 504);
  ASSERT_EQ(res.status, reassembly_status::complete);
  EXPECT_EQ(r().expire(reassembly::no_deadline - 1), 0u);  // not expire()'s to take
  EXPECT_TRUE(std::ranges::equal(res.payload, d));
  EXPECT_EQ(r().held_bytes(), 1000u);
  r().release(res.slot);
  EXPECT_EQ(r().held_bytes(), 0u);
}

TEST_F(reassembly_test, Rfc791FragmentsWithAnotherProtocolAreAnotherDatagram) {
  const auto d = datagram(2000);
  frag(d, 0, 1000);
  EXPECT_EQ(frag(d, 1000, 1000, 0, {.src = key.src, .dst = key.dst, .id = key.id, .protocol = 6}).status,
            reassembly_status::incomplete);
  EXPECT_EQ(r().in_progress(), 2u);
}

TEST_F(reassembly_test, DropReasonsHaveTheirNames) {
  EXPECT_EQ(to_string(reassembly_drop::overlap), "overlap");
  EXPECT_EQ(to_string(reassembly_drop::too_many_holes), "too_many_holes");
  EXPECT_EQ(to_string(reassembly_drop::timeout), "timeout");
}

}  // namespace
}  // namespace affine::stack
