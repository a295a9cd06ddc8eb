// ECN marking (RFC 3168 5): the rate limiter's backlog at or over
// ecn_mark_bytes marks an ECN-capable IPv4 or IPv6 frame CE, as a router's
// queue management does; IPv4's header checksum still verifies; a frame
// that is not ECN-capable, or not IP, is never touched.

#include <cstring>

#include "tests/drivers/wire/wire_fixture.hh"

namespace affine::drivers::wire::testing {
namespace {

using ecn_mark = wire_test;

constexpr std::uint32_t eth = 14;

// A frame of `len` bytes: Ethernet, then an IPv4 header with TOS `tos` and
// a right checksum (or an IPv6 header with Traffic Class `tos`), the id
// after the IP header.
std::vector<std::uint8_t> ip_frame(bool v6, std::uint8_t tos, std::uint32_t id, std::uint32_t len = 1000) {
  std::vector<std::uint8_t> b(len, 0x5a);
  const std::uint8_t mac[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
  std::memcpy(b.data(), mac, 12);
  b[12] = v6 ? 0x86 : 0x08;
  b[13] = v6 ? 0xdd : 0x00;
  if (v6) {
    b[eth] = std::uint8_t(0x60 | tos >> 4);
    b[eth + 1] = std::uint8_t(tos << 4);
    std::memcpy(b.data() + eth + 40, &id, 4);
    return b;
  }
  const std::uint8_t ip[20] = {0x45, tos, std::uint8_t((len - eth) >> 8), std::uint8_t(len - eth), 0, 1, 0x40, 0, 64,
                               6,    0,   0,                               10,  0, 0, 1, 10, 0, 0, 2};
  std::memcpy(b.data() + eth, ip, 20);
  std::uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += std::uint32_t(b[eth + i] << 8 | b[eth + i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  b[eth + 10] = std::uint8_t(~sum >> 8);
  b[eth + 11] = std::uint8_t(~sum);
  std::memcpy(b.data() + eth + 20, &id, 4);
  return b;
}

std::uint8_t ecn_of(const std::vector<std::uint8_t>& b) {
  return b[12] == 0x86 ? (b[eth + 1] >> 4) & 3 : b[eth + 1] & 3;
}

bool ipv4_checksum_verifies(const std::vector<std::uint8_t>& b) {
  std::uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += std::uint32_t(b[eth + i] << 8 | b[eth + i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

class marking : public ecn_mark {
 protected:
  // 1000-byte frames at 1 MB/s: frame k finds k * 1000 bytes ahead of it.
  void make_link(std::uint64_t mark_bytes) {
    impairments imp;
    imp.rate_bytes_per_s = 1'000'000;
    imp.rate_queue_bytes = 20'000;
    imp.ecn_mark_bytes = mark_bytes;
    make(imp);
  }
  void send_frame(const std::vector<std::uint8_t>& bytes) {
    rte_mbuf* m = build(pool_a_, bytes);
    ASSERT_EQ(link_->a().tx_burst(0, &m, 1), 1);
  }
};

TEST_F(marking, an_ect_frame_behind_the_threshold_is_marked_ce_and_its_checksum_verifies) {
  make_link(3000);
  for (std::uint32_t k = 0; k < 6; ++k) send_frame(ip_frame(false, 0x02, k));  // ECT(0)
  const auto got = drain();
  ASSERT_EQ(got.size(), 6u);
  for (std::uint32_t k = 0; k < 6; ++k) {
    EXPECT_EQ(ecn_of(got[k].bytes), k >= 3 ? 3 : 2) << "frame " << k << " found " << k * 1000 << " bytes ahead";
    EXPECT_TRUE(ipv4_checksum_verifies(got[k].bytes)) << "frame " << k;
  }
  EXPECT_EQ(link_->stats(side::a).ce_marked, 3u);
}

TEST_F(marking, ipv6_ect1_is_marked_and_the_dscp_kept) {
  make_link(1000);
  send_frame(ip_frame(true, 0xb9, 0));  // DSCP 46, ECT(1)
  send_frame(ip_frame(true, 0xb9, 1));
  const auto got = drain();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(ecn_of(got[0].bytes), 1);
  EXPECT_EQ(ecn_of(got[1].bytes), 3);
  EXPECT_EQ(got[1].bytes[eth] & 0x0f, 0xb);  // the Traffic Class's high bits are untouched
  EXPECT_EQ(got[1].bytes[eth + 1] >> 6, 0x2);
}

TEST_F(marking, frames_that_are_not_ecn_capable_or_not_ip_are_never_touched) {
  make_link(1000);
  const std::vector<std::vector<std::uint8_t>> frames = {ip_frame(false, 0xb8, 0), ip_frame(false, 0x03, 1),
                                                         ip_frame(true, 0x00, 2), pattern(3, 1000)};
  send_frame(ip_frame(false, 0x02, 9));  // the first, on the idle link: the backlog behind it
  for (const auto& f : frames) send_frame(f);
  send_frame(ip_frame(false, 0x02, 4));
  const auto got = drain();
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(ecn_of(got[0].bytes), 2);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(got[k + 1].bytes, frames[k]) << "frame " << k;
  EXPECT_EQ(ecn_of(got[5].bytes), 3);
  EXPECT_EQ(link_->stats(side::a).ce_marked, 1u);
}

TEST_F(marking, without_a_threshold_nothing_is_marked) {
  make_link(0);
  for (std::uint32_t k = 0; k < 6; ++k) send_frame(ip_frame(false, 0x02, k));
  for (const auto& a : drain()) EXPECT_EQ(ecn_of(a.bytes), 2);
  EXPECT_EQ(link_->stats(side::a).ce_marked, 0u);
}

}  // namespace
}  // namespace affine::drivers::wire::testing
