#include "stack/tcp/isn.hh"

#include <gtest/gtest.h>

#include <vector>

namespace affine::stack::tcp {
namespace {

// Key 00 01 .. 0f, as in the SipHash paper's Appendix A and the reference
// implementation's vectors.h.
constexpr siphash_key reference_key = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

TEST(siphash_test, MatchesTheReferenceVectorsForMessagesOfLength0To16) {
  // vectors_sip64 from the reference implementation: message i is the bytes
  // 00 01 .. (i-1); each output read as a little-endian 64-bit word. Length
  // 15 is the paper's Appendix A example, 0xa129ca6149be45e5.
  constexpr std::uint64_t expected[] = {
      0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
      0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
      0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
      0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
      0x3f2acc7f57c29bdb,
  };
  std::vector<std::byte> message;
  for (std::uint64_t want : expected) {
    EXPECT_EQ(siphash_2_4(reference_key, message), want) << "message length " << message.size();
    message.push_back(std::byte(message.size()));
  }
}

const flow_tuple tuple{.local_addr = v4_flow(0x0a4d0001), .remote_addr = v4_flow(0x0a4d0002), .local_port = 80,
                       .remote_port = 40000};

TEST(isn_test, SameInputsGiveTheSameIsn) {
  const isn_generator g(reference_key);
  EXPECT_EQ(g.next(tuple, 123'456'789), g.next(tuple, 123'456'789));
  EXPECT_EQ(isn_generator(reference_key).next(tuple, 5), g.next(tuple, 5));
}

TEST(isn_test, AtTimeZeroTheIsnIsTheHashOfTheConnectionId) {
  // Local address, local port, remote address, remote port, network order.
  const std::byte id[] = {std::byte{0x0a}, std::byte{0x4d}, std::byte{0x00}, std::byte{0x01},
                          std::byte{0x00}, std::byte{80},   std::byte{0x0a}, std::byte{0x4d},
                          std::byte{0x00}, std::byte{0x02}, std::byte{0x9c}, std::byte{0x40}};
  EXPECT_EQ(isn_generator(reference_key).next(tuple, 0).raw(), std::uint32_t(siphash_2_4(reference_key, id)));
}

TEST(isn_test, AnIpv6ConnectionIdHoldsTheWholeAddresses) {
  // RFC 6528 3 over IPv6: the 16-byte addresses, in the same order.
  flow_tuple t{.local_addr = {0xfd, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2},
               .remote_addr = {0xfd, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
               .local_port = 80,
               .remote_port = 40000};
  std::vector<std::byte> id;
  for (std::uint8_t b : t.local_addr) id.push_back(std::byte(b));
  id.insert(id.end(), {std::byte{0x00}, std::byte{80}});
  for (std::uint8_t b : t.remote_addr) id.push_back(std::byte(b));
  id.insert(id.end(), {std::byte{0x9c}, std::byte{0x40}});
  const isn_generator g(reference_key);
  EXPECT_EQ(g.next(t, 0).raw(), std::uint32_t(siphash_2_4(reference_key, id)));
  // A byte far from the end of an address changes it too.
  const seq32 base = g.next(t, 0);
  t.remote_addr[1] ^= 1;
  EXPECT_NE(g.next(t, 0), base);
}

TEST(isn_test, EachFieldOfTheTupleChangesTheIsn) {
  const isn_generator g(reference_key);
  const seq32 base = g.next(tuple, 0);
  flow_tuple t = tuple;
  t.local_addr[15] += 1;
  EXPECT_NE(g.next(t, 0), base);
  t = tuple;
  t.remote_addr[15] += 1;
  EXPECT_NE(g.next(t, 0), base);
  t = tuple;
  t.local_port += 1;
  EXPECT_NE(g.next(t, 0), base);
  t = tuple;
  t.remote_port += 1;
  EXPECT_NE(g.next(t, 0), base);
  const flow_tuple swapped{.local_addr = tuple.remote_addr, .remote_addr = tuple.local_addr,
                           .local_port = tuple.remote_port, .remote_port = tuple.local_port};
  EXPECT_NE(g.next(swapped, 0), base);
}

TEST(isn_test, TheSecretChangesTheIsn) {
  siphash_key other = reference_key;
  other[0] ^= 1;
  EXPECT_NE(isn_generator(other).next(tuple, 0), isn_generator(reference_key).next(tuple, 0));
}

TEST(isn_test, IsnAdvancesOncePerFourMicroseconds) {
  const isn_generator g(reference_key);
  const std::uint64_t t0 = 1'000'000'000;  // a multiple of 4 us
  EXPECT_EQ(g.next(tuple, t0 + 3'999), g.next(tuple, t0));
  EXPECT_EQ(g.next(tuple, t0 + 4'000) - g.next(tuple, t0), 1);
  EXPECT_EQ(g.next(tuple, t0 + 4'000'000) - g.next(tuple, t0), 1000);
}

TEST(isn_test, TheClockWrapsModulo2To32) {
  const isn_generator g(reference_key);
  EXPECT_EQ(g.next(tuple, 4'000ull << 32), g.next(tuple, 0));
}

TEST(isn_test, RandomDeviceSecretsDiffer) {
  EXPECT_NE(isn_generator::from_random_device().next(tuple, 0), isn_generator::from_random_device().next(tuple, 0));
}

}  // namespace
}  // namespace affine::stack::tcp
