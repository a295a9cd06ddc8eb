#include "stack/wire/checksum.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/xoshiro.hh"
#include "stack/wire/endian.hh"
#include "stack/wire/error.hh"
#include "stack/wire/ipv6.hh"
#include "tests/stack/wire/frames.hh"

namespace affine::stack {
namespace {

using test::bytes_of;
using test::from_hex;

// The checksum computed the slow way RFC 1071 4.1 shows, as a reference.
std::uint16_t reference_checksum(std::span<const std::byte> b) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < b.size(); i += 2) {
    sum += std::uint32_t(b[i]) << 8;
    if (i + 1 < b.size()) sum += std::uint32_t(b[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  }
  return std::uint16_t(~sum);
}

TEST(Checksum, Rfc1071NumericalExampleSumsToDdf2) {
  // RFC 1071 3: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2.
  const auto b = bytes_of({0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7});
  checksum_accumulator c;
  c.add(b);
  EXPECT_EQ(c.sum(), 0xddf2);
  EXPECT_EQ(c.checksum(), 0x220d);
  EXPECT_EQ(internet_checksum(b), 0x220d);
}

TEST(Checksum, EmptyDataSumsToZero) {
  checksum_accumulator c;
  c.add({});
  EXPECT_EQ(c.sum(), 0);
  EXPECT_EQ(internet_checksum({}), 0xffff);
}

TEST(Checksum, OddLastBytePadsAsHighHalf) {
  // RFC 1071 4.1: a last odd byte is added as if followed by a zero byte.
  EXPECT_EQ(internet_checksum(bytes_of({0xab})), std::uint16_t(~0xab00));
  EXPECT_EQ(internet_checksum(bytes_of({0x12, 0x34, 0xab})), std::uint16_t(~(0x1234 + 0xab00)));
}

TEST(Checksum, MatchesReferenceForEveryLengthAndAlignment) {
  xoshiro256ss rng({1, 2, 3, 4});
  std::vector<std::byte> data(300);
  for (auto& b : data) b = std::byte(rng.next());
  for (std::size_t start = 0; start < 8; ++start)
    for (std::size_t len = 0; start + len <= data.size(); ++len) {
      const std::span<const std::byte> s(data.data() + start, len);
      ASSERT_EQ(internet_checksum(s), reference_checksum(s)) << "start " << start << " length " << len;
    }
}

TEST(Checksum, CarriesAcrossManyAllOnesWords) {
  // Every word 0xffff: the accumulators carry on every step; the sum stays 0xffff.
  const std::vector<std::byte> data(4096 + 3, std::byte{0xff});
  EXPECT_EQ(internet_checksum(data), reference_checksum(data));
}

// An unfolded native-order sum folded to 16 bits, as the accumulator does.
std::uint16_t folded(std::uint64_t s) {
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return std::uint16_t(s);
}

TEST(Checksum, VectorAndPortableSumsMatchTheReferenceAtEveryLengthAndAlignment) {
  // Lengths across the scalar, vector and mixed cases (vectors from 256
  // bytes, a tail under two vectors left to the scalar loop).
  // With a destination, each copies the bytes as it sums them.
  xoshiro256ss rng({9, 10, 11, 12});
  std::vector<std::byte> data(2200), copy(2200);
  for (auto& b : data) b = std::byte(rng.next());
  for (std::size_t start = 0; start < 8; ++start)
    for (std::size_t len = 0; start + len <= 2100; ++len) {
      const std::byte* p = data.data() + start;
      const std::uint16_t want = std::uint16_t(~reference_checksum({p, len}));
      ASSERT_EQ(from_big_endian(folded(checksum_detail::native_sum(p, len))), want)
          << "start " << start << " length " << len;
      ASSERT_EQ(from_big_endian(folded(checksum_detail::portable_sum(p, len))), want)
          << "start " << start << " length " << len;
      for (const auto sum : {checksum_detail::native_sum, checksum_detail::portable_sum}) {
        std::fill(copy.begin(), copy.end(), std::byte{0xee});
        ASSERT_EQ(from_big_endian(folded(sum(p, len, copy.data() + 1))), want) << "copying, length " << len;
        ASSERT_TRUE(std::equal(p, p + len, copy.data() + 1)) << "copy of length " << len;
        ASSERT_EQ(copy[0], std::byte{0xee});
        ASSERT_EQ(copy[len + 1], std::byte{0xee}) << "wrote past the copy of length " << len;
      }
    }
}

TEST(Checksum, CopyAndAddAppendsAsAddDoesAfterOddData) {
  xoshiro256ss rng({17, 18, 19, 20});
  std::vector<std::byte> data(1500), copy(1500);
  for (auto& b : data) b = std::byte(rng.next());
  checksum_accumulator added, copied;
  added.add(std::span(data).first(7));
  copied.add(std::span(data).first(7));
  added.add(std::span(data).subspan(7));
  copied.copy_and_add(copy.data() + 7, std::span(data).subspan(7));
  EXPECT_EQ(copied.sum(), added.sum());
  EXPECT_EQ(copied.sum(), std::uint16_t(~reference_checksum(data)));
  EXPECT_TRUE(std::equal(data.begin() + 7, data.end(), copy.begin() + 7));
}

TEST(Checksum, VectorLanesDoNotWrapOverManyBlocks) {
  // All-ones words push every lane up by the most a step can add, over
  // several of the blocks the lanes are folded after (5 MiB).
  const std::vector<std::byte> ones((5u << 20) + 6, std::byte{0xff});
  EXPECT_EQ(internet_checksum(ones), reference_checksum(ones));
  EXPECT_EQ(folded(checksum_detail::portable_sum(ones.data(), ones.size())), 0xffff);
  xoshiro256ss rng({13, 14, 15, 16});
  std::vector<std::byte> data((5u << 20) + 1);
  for (auto& b : data) b = std::byte(rng.next());
  EXPECT_EQ(internet_checksum(data), reference_checksum(data));
  EXPECT_EQ(folded(checksum_detail::portable_sum(data.data(), data.size())),
            folded(checksum_detail::native_sum(data.data(), data.size())));
}

TEST(Checksum, IncrementalOverAnySplitEqualsOneShot) {
  xoshiro256ss rng({5, 6, 7, 8});
  std::vector<std::byte> data(97);
  for (auto& b : data) b = std::byte(rng.next());
  const std::uint16_t whole = internet_checksum(data);
  for (std::size_t i = 0; i <= data.size(); ++i)
    for (std::size_t j = i; j <= data.size(); j += 7) {
      checksum_accumulator c;
      c.add(std::span(data).first(i));
      c.add(std::span(data).subspan(i, j - i));
      c.add(std::span(data).subspan(j));
      ASSERT_EQ(c.checksum(), whole) << "split at " << i << " and " << j;
    }
}

TEST(Checksum, WordsAddedInHostOrderMatchTheirBytes) {
  checksum_accumulator words, bytes;
  words.add16(0x1234);
  words.add32(0xdeadbeef);
  bytes.add(bytes_of({0x12, 0x34, 0xde, 0xad, 0xbe, 0xef}));
  EXPECT_EQ(words.sum(), bytes.sum());
}

TEST(Checksum, DataWithItsChecksumVerifies) {
  auto b = bytes_of({0x45, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x40, 0x01});
  b.resize(b.size() + 2);
  store_be16(b.data() + b.size() - 2, internet_checksum(std::span(b).first(b.size() - 2)));
  checksum_accumulator acc;
  acc.add(b);
  EXPECT_TRUE(acc.verifies());
  b[0] ^= std::byte{1};
  checksum_accumulator bad;
  bad.add(b);
  EXPECT_FALSE(bad.verifies());
}

TEST(Checksum, PseudoHeaderSumOfCapturedSynIsWhatLinuxLeftForOffload) {
  // Linux on loopback stores the folded pseudo-header sum, as a NIC expects.
  const auto frame = from_hex(test::tcp_syn_hex);
  const auto segment = test::transport_of(frame);
  EXPECT_EQ(ipv4_pseudo_header(test::loopback_ip, test::loopback_ip, 6, std::uint16_t(segment.size())).sum(),
            test::tcp_syn_partial_checksum);
}

TEST(Checksum, TransportChecksumOfCapturedSynMatchesTshark) {
  auto frame = from_hex(test::tcp_syn_hex);
  auto segment = std::span(frame).subspan(test::ethernet_length + test::ipv4_length);
  segment[16] = segment[17] = std::byte{0};
  EXPECT_EQ(ipv4_transport_checksum(test::loopback_ip, test::loopback_ip, 6, segment.first(20), segment.subspan(20),
                                    checksum_mode::software),
            test::tcp_syn_checksum);
  EXPECT_EQ(ipv4_transport_checksum(test::loopback_ip, test::loopback_ip, 6, segment.first(20), segment.subspan(20),
                                    checksum_mode::offload),
            test::tcp_syn_partial_checksum);
}

TEST(Checksum, CapturedEchoReplyVerifies) {
  const auto frame = from_hex(test::icmp_echo_reply_hex);
  checksum_accumulator c;
  c.add(test::transport_of(frame));
  EXPECT_TRUE(c.verifies());
}

TEST(Checksum, CapturedRstVerifiesWithPseudoHeader) {
  const auto frame = from_hex(test::tcp_rst_ack_hex);
  EXPECT_TRUE(ipv4_transport_verifies(test::loopback_ip, test::loopback_ip, 6, test::transport_of(frame)));
  EXPECT_FALSE(ipv4_transport_verifies(test::loopback_ip, test::loopback_ip + 1, 6, test::transport_of(frame)));
}

// RFC 8200 8.1: source, destination, a 32-bit upper-layer length, three
// zero bytes and the Next Header, summed as the bytes they are.
TEST(Checksum, Ipv6PseudoHeaderIsTheRfc8200Layout_RFC8200_8_1) {
  const ipv6_bytes src{0x20, 0x01, 0x0d, 0xb8, 0, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  const ipv6_bytes dst{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0, 0, 1};
  // A length past 16 bits (a jumbogram's, RFC 2675) counts all of its bits.
  for (const std::uint32_t length : {0u, 19u, 0x12345u}) {
    std::vector<std::byte> layout;
    for (const auto b : src) layout.push_back(std::byte(b));
    for (const auto b : dst) layout.push_back(std::byte(b));
    layout.resize(layout.size() + 8);
    store_be32(layout.data() + 32, length);
    layout[39] = std::byte{58};
    EXPECT_EQ(ipv6_pseudo_header(src, dst, 58, length).checksum(), reference_checksum(layout)) << length;
  }
}

// Linux left the UDP checksum of the captured IPv6 datagram to offload:
// the pseudo-header sum is what ipv6_transport_checksum gives for offload,
// and the full one what tshark computed.
TEST(Checksum, Ipv6TransportChecksumOfCapturedUdpMatchesLinuxAndTshark_RFC8200_8_1) {
  const auto frame = from_hex(test::udp6_hex);
  const auto ip = std::span(frame).subspan(test::ethernet_length);
  ipv6_bytes src, dst;
  std::memcpy(src.data(), ip.data() + 8, 16);
  std::memcpy(dst.data(), ip.data() + 24, 16);
  auto udp = std::vector<std::byte>(ip.begin() + test::ipv6_length, ip.end());
  ASSERT_EQ(load_be16(udp.data() + 6), test::udp6_partial_checksum);
  store_be16(udp.data() + 6, 0);
  const auto header = std::span(udp).first(8), payload = std::span(udp).subspan(8);
  EXPECT_EQ(ipv6_transport_checksum(src, dst, 17, header, payload, checksum_mode::offload),
            test::udp6_partial_checksum);
  EXPECT_EQ(ipv6_transport_checksum(src, dst, 17, header, payload, checksum_mode::software), test::udp6_checksum);
  store_be16(udp.data() + 6, test::udp6_checksum);
  EXPECT_TRUE(ipv6_transport_verifies(src, dst, 17, udp));
  EXPECT_FALSE(ipv6_transport_verifies(dst, dst, 17, udp));
  EXPECT_FALSE(ipv6_transport_verifies(src, dst, 6, udp));
}

TEST(WireErrors, EveryParseErrorHasItsCounterName) {
  EXPECT_EQ(to_string(parse_error::truncated), "truncated");
  EXPECT_EQ(to_string(parse_error::bad_version), "bad_version");
  EXPECT_EQ(to_string(parse_error::bad_header_length), "bad_header_length");
  EXPECT_EQ(to_string(parse_error::bad_total_length), "bad_total_length");
  EXPECT_EQ(to_string(parse_error::bad_length), "bad_length");
  EXPECT_EQ(to_string(parse_error::bad_checksum), "bad_checksum");
  EXPECT_EQ(to_string(parse_error::bad_flags), "bad_flags");
  EXPECT_EQ(to_string(parse_error::bad_option), "bad_option");
  EXPECT_EQ(to_string(parse_error::bad_payload_length), "bad_payload_length");
  EXPECT_EQ(to_string(parse_error::bad_extension), "bad_extension");
  EXPECT_EQ(to_string(parse_error::bad_hop_limit), "bad_hop_limit");
  EXPECT_EQ(to_string(parse_error::bad_code), "bad_code");
  EXPECT_EQ(to_string(parse_error::bad_source), "bad_source");
  EXPECT_EQ(to_string(parse_error::bad_destination), "bad_destination");
  EXPECT_EQ(to_string(parse_error::bad_target), "bad_target");
  EXPECT_EQ(to_string(parse_error::unsupported), "unsupported");
}

TEST(WireErrors, EveryEmitErrorHasAName) {
  EXPECT_EQ(to_string(emit_error::buffer_too_small), "buffer_too_small");
  EXPECT_EQ(to_string(emit_error::too_long), "too_long");
  EXPECT_EQ(to_string(emit_error::options_too_long), "options_too_long");
}

}  // namespace
}  // namespace affine::stack
