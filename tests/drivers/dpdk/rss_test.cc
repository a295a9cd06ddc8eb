// The software Toeplitz hash against the Microsoft RSS verification suite,
// the symmetric key, the frame parser under it, and RETA planning.

#include <array>

#include "drivers/dpdk/rss.hh"
#include "tests/drivers/dpdk/dpdk_fixture.hh"

namespace affine::drivers::dpdk::test {
namespace {

// The key of the Microsoft RSS specification ("Verifying the RSS Hash
// Calculation"), also the default of many NICs.
constexpr std::array<std::uint8_t, 40> microsoft_key{
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

struct vector_case {
  std::array<std::uint8_t, 4> src, dst;
  std::uint16_t sport, dport;
  std::uint32_t ipv4_hash, tcp_hash;
};

// The IPv4 table of the verification suite.
constexpr std::array<vector_case, 5> microsoft_vectors{{
    {{66, 9, 149, 187}, {161, 142, 100, 80}, 2794, 1766, 0x323e8fc2, 0x51ccc178},
    {{199, 92, 111, 2}, {65, 69, 140, 83}, 14230, 4739, 0xd718262a, 0xc626b0ea},
    {{24, 19, 198, 95}, {12, 22, 207, 184}, 12898, 38024, 0xd2d0a5de, 0x5c2b394a},
    {{38, 27, 205, 30}, {209, 142, 163, 6}, 48228, 2217, 0x82989176, 0xafc7327f},
    {{153, 39, 163, 191}, {202, 188, 127, 2}, 44251, 1303, 0x5d1809c5, 0x10e828a2},
}};

std::uint32_t addr(const std::array<std::uint8_t, 4>& a) {
  return std::uint32_t(a[0]) << 24 | std::uint32_t(a[1]) << 16 | std::uint32_t(a[2]) << 8 | a[3];
}

std::span<const std::byte> as_bytes(const std::vector<std::uint8_t>& v) { return std::as_bytes(std::span(v)); }

TEST(toeplitz, microsoft_verification_suite_ipv4_only) {
  for (const auto& v : microsoft_vectors) {
    std::array<std::uint8_t, 8> input;
    std::copy(v.src.begin(), v.src.end(), input.begin());
    std::copy(v.dst.begin(), v.dst.end(), input.begin() + 4);
    EXPECT_EQ(toeplitz_hash(microsoft_key, input), v.ipv4_hash);
  }
}

TEST(toeplitz, microsoft_verification_suite_ipv4_with_tcp_ports) {
  for (const auto& v : microsoft_vectors) {
    std::array<std::uint8_t, 12> input;
    std::copy(v.src.begin(), v.src.end(), input.begin());
    std::copy(v.dst.begin(), v.dst.end(), input.begin() + 4);
    input[8] = std::uint8_t(v.sport >> 8), input[9] = std::uint8_t(v.sport);
    input[10] = std::uint8_t(v.dport >> 8), input[11] = std::uint8_t(v.dport);
    EXPECT_EQ(toeplitz_hash(microsoft_key, input), v.tcp_hash);
  }
}

TEST(toeplitz, frame_hash_of_a_tcp_frame_is_the_suite_value) {
  for (const auto& v : microsoft_vectors) {
    const auto f = ipv4_frame(addr(v.src), addr(v.dst), 6, v.sport, v.dport);
    EXPECT_EQ(frame_rss_hash(microsoft_key, as_bytes(f)), v.tcp_hash);
  }
}

TEST(toeplitz, fragments_and_other_protocols_hash_addresses_only) {
  const auto& v = microsoft_vectors[0];
  auto fragment = ipv4_frame(addr(v.src), addr(v.dst), 6, v.sport, v.dport);
  fragment[14 + 6] = 0x20;  // more fragments
  EXPECT_EQ(frame_rss_hash(microsoft_key, as_bytes(fragment)), v.ipv4_hash);
  const auto icmp = ipv4_frame(addr(v.src), addr(v.dst), 1, 0, 0);
  EXPECT_EQ(frame_rss_hash(microsoft_key, as_bytes(icmp)), v.ipv4_hash);
}

TEST(toeplitz, vlan_tagged_frame_hashes_its_inner_packet) {
  const auto& v = microsoft_vectors[1];
  auto f = ipv4_frame(addr(v.src), addr(v.dst), 17, v.sport, v.dport);
  const std::array<std::uint8_t, 4> tag{0x81, 0x00, 0x00, 0x07};
  f.insert(f.begin() + 12, tag.begin(), tag.end());
  EXPECT_EQ(frame_rss_hash(microsoft_key, as_bytes(f)), v.tcp_hash);
}

TEST(toeplitz, symmetric_key_gives_both_directions_one_hash) {
  const auto key = symmetric_rss_key();
  ASSERT_EQ(key.size(), 40u);
  EXPECT_EQ(key[0], 0x6d);
  EXPECT_EQ(key[1], 0x5a);
  for (const auto& v : microsoft_vectors) {
    const auto there = ipv4_frame(addr(v.src), addr(v.dst), 6, v.sport, v.dport);
    const auto back = ipv4_frame(addr(v.dst), addr(v.src), 6, v.dport, v.sport);
    EXPECT_EQ(frame_rss_hash(key, as_bytes(there)), frame_rss_hash(key, as_bytes(back)));
    // The Microsoft key is not symmetric: the property comes from the key.
    EXPECT_NE(frame_rss_hash(microsoft_key, as_bytes(there)), frame_rss_hash(microsoft_key, as_bytes(back)));
  }
}

TEST(toeplitz, truncated_and_malformed_frames_have_no_flow) {
  const auto f = ipv4_frame(0x0a000001, 0x0a000002, 6, 1000, 80);
  // Every truncation short of the IPv4 header: no hash, no read past the end.
  for (std::size_t len = 0; len < 14 + 20; ++len)
    EXPECT_FALSE(frame_rss_hash(microsoft_key, as_bytes(f).first(len)).has_value()) << len;
  // The IPv4 header but only part of the ports: addresses only.
  EXPECT_TRUE(frame_rss_hash(microsoft_key, as_bytes(f).first(14 + 20 + 3)).has_value());

  auto bad_ihl = f;
  bad_ihl[14] = 0x43;  // IHL 3 words: shorter than an IPv4 header
  EXPECT_FALSE(frame_rss_hash(microsoft_key, as_bytes(bad_ihl)).has_value());
  auto long_ihl = f;
  long_ihl[14] = 0x4f;  // IHL 60 bytes, frame has fewer after the Ethernet header
  EXPECT_FALSE(frame_rss_hash(microsoft_key, as_bytes(long_ihl).first(14 + 40)).has_value());
  auto ipv6 = f;
  ipv6[12] = 0x86, ipv6[13] = 0xdd;
  EXPECT_FALSE(frame_rss_hash(microsoft_key, as_bytes(ipv6)).has_value());
  auto version = f;
  version[14] = 0x65;
  EXPECT_FALSE(frame_rss_hash(microsoft_key, as_bytes(version)).has_value());
}

TEST(rss_mode_names, parse_the_config_values) {
  EXPECT_EQ(parse_rss_mode("symmetric"), rss_mode::symmetric);
  EXPECT_EQ(parse_rss_mode("default"), rss_mode::driver_default);
  EXPECT_EQ(parse_rss_mode("off"), rss_mode::off);
  EXPECT_FALSE(parse_rss_mode("toeplitz").has_value());
}

TEST(reta_plan, every_core_gets_an_equal_share_even_with_uneven_queues) {
  // Queues 0 and 2 on core 5, queue 1 on core 9.
  const std::vector<rxq_assignment> plan{{0, core_id{5}}, {1, core_id{9}}, {2, core_id{5}}};
  EXPECT_EQ(reta_from_plan(plan, 8), (std::vector<std::uint16_t>{0, 1, 2, 1, 0, 1, 2, 1}));
}

TEST(reta_plan, one_queue_per_core_is_round_robin) {
  const std::vector<rxq_assignment> plan{{0, core_id{0}}, {1, core_id{1}}, {2, core_id{2}}};
  EXPECT_EQ(reta_from_plan(plan, 6), (std::vector<std::uint16_t>{0, 1, 2, 0, 1, 2}));
}

TEST(reta_plan, empty_plan_points_everything_at_queue_0) {
  EXPECT_EQ(reta_from_plan({}, 4), (std::vector<std::uint16_t>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace affine::drivers::dpdk::test
