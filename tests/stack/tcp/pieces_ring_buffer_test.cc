#include "stack/tcp/ring_buffer.hh"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace affine::stack::tcp {
namespace {

std::span<const std::byte> bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

std::string as_string(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

std::string read_all(ring_buffer& r) {
  std::vector<std::byte> out(r.size());
  EXPECT_EQ(r.read(out), out.size());
  return as_string(out);
}

class ring_buffer_test : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(ring_buffer::live_bytes(), 0u);
    EXPECT_EQ(ring_buffer::allocated_bytes(), 0u);
  }
};

TEST_F(ring_buffer_test, WriteThenReadReturnsTheSameBytesInOrder) {
  ring_buffer r(16);
  EXPECT_EQ(r.write(bytes("hello")), 5u);
  EXPECT_EQ(r.size(), 5u);
  EXPECT_EQ(r.free(), 11u);
  EXPECT_EQ(read_all(r), "hello");
  EXPECT_TRUE(r.empty());
}

TEST_F(ring_buffer_test, WriteTakesOnlyWhatFits) {
  ring_buffer r(8);
  EXPECT_EQ(r.write(bytes("0123456789")), 8u);
  EXPECT_EQ(r.free(), 0u);
  EXPECT_EQ(r.write(bytes("x")), 0u);
  EXPECT_EQ(read_all(r), "01234567");
}

TEST_F(ring_buffer_test, WrapAroundKeepsByteOrder) {
  ring_buffer r(8);
  ASSERT_EQ(r.write(bytes("abcdef")), 6u);
  std::vector<std::byte> four(4);
  ASSERT_EQ(r.read(four), 4u);
  EXPECT_EQ(as_string(four), "abcd");
  // "ef" sits at the end of the storage; "ghijkl" wraps to the start.
  EXPECT_EQ(r.write(bytes("ghijkl")), 6u);
  EXPECT_EQ(read_all(r), "efghijkl");
}

TEST_F(ring_buffer_test, PeekCopiesAcrossTheWrapWithoutPopping) {
  ring_buffer r(8);
  r.write(bytes("abcdef"));
  r.consume(5);
  r.write(bytes("ghijk"));  // "f" at index 5, "gh" at 6-7, "ijk" at 0-2
  std::vector<std::byte> out(4);
  EXPECT_EQ(r.peek(1, out), 4u);
  EXPECT_EQ(as_string(out), "ghij");
  EXPECT_EQ(r.peek(5, out), 1u);
  EXPECT_EQ(r.peek(6, out), 0u);
  EXPECT_EQ(r.size(), 6u);
}

TEST_F(ring_buffer_test, ContiguousAtStopsAtTheWrapPoint) {
  ring_buffer r(8);
  r.write(bytes("abcdef"));
  r.consume(5);
  r.write(bytes("ghijk"));  // physical layout: ijk..fgh
  EXPECT_EQ(as_string(r.contiguous_at(0, 100)), "fgh");
  EXPECT_EQ(as_string(r.contiguous_at(1, 100)), "gh");
  EXPECT_EQ(as_string(r.contiguous_at(3, 100)), "ijk");
  EXPECT_EQ(as_string(r.contiguous_at(4, 100)), "jk");
  EXPECT_EQ(as_string(r.contiguous_at(0, 2)), "fg");
  EXPECT_TRUE(r.contiguous_at(6, 100).empty());
}

TEST_F(ring_buffer_test, ConsumeDropsBytesFromTheFront) {
  ring_buffer r(8);
  r.write(bytes("abcdef"));
  r.consume(2);
  EXPECT_EQ(r.size(), 4u);
  EXPECT_EQ(read_all(r), "cdef");
}

TEST_F(ring_buffer_test, WriteAtHoldsOutOfOrderBytesUntilCommit) {
  ring_buffer r(16);
  r.write(bytes("ab"));
  EXPECT_EQ(r.write_at(3, bytes("fgh")), 3u);
  EXPECT_EQ(r.size(), 2u);  // not readable yet: "cde" is missing
  EXPECT_EQ(r.write(bytes("cde")), 3u);
  r.commit(3);
  EXPECT_EQ(read_all(r), "abcdefgh");
}

TEST_F(ring_buffer_test, WriteAtIsBoundedByFreeSpace) {
  ring_buffer r(8);
  r.write(bytes("abcd"));
  EXPECT_EQ(r.write_at(2, bytes("xyzzy")), 2u);
  EXPECT_EQ(r.write_at(4, bytes("x")), 0u);
  EXPECT_EQ(r.write_at(100, bytes("x")), 0u);
}

TEST_F(ring_buffer_test, WriteAtDataSurvivesTheReaderDrainingTheRing) {
  ring_buffer r(8);
  r.write(bytes("1234"));
  ASSERT_EQ(r.write_at(2, bytes("cd")), 2u);
  EXPECT_EQ(read_all(r), "1234");
  r.write(bytes("ab"));
  r.commit(2);
  EXPECT_EQ(read_all(r), "abcd");
}

TEST_F(ring_buffer_test, WriteAtWrapsAroundTheEndOfStorage) {
  ring_buffer r(8);
  r.write(bytes("123456"));
  r.consume(6);  // the next write starts at index 6
  ASSERT_EQ(r.write_at(1, bytes("bcd")), 3u);  // indexes 7, 0, 1
  r.write(bytes("a"));
  r.commit(3);
  EXPECT_EQ(as_string(r.contiguous_at(0, 100)), "ab");
  EXPECT_EQ(read_all(r), "abcd");
}

TEST_F(ring_buffer_test, ZeroCapacityRingTakesNothing) {
  ring_buffer r(0);
  EXPECT_EQ(r.capacity(), 0u);
  EXPECT_EQ(r.write(bytes("a")), 0u);
  EXPECT_EQ(r.write_at(0, bytes("a")), 0u);
  EXPECT_TRUE(r.contiguous_at(0, 10).empty());
  std::vector<std::byte> out(1);
  EXPECT_EQ(r.read(out), 0u);
}

TEST_F(ring_buffer_test, ClearEmptiesTheRingAndKeepsItsCapacity) {
  ring_buffer r(8);
  r.write(bytes("abcdef"));
  r.clear();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.free(), 8u);
  EXPECT_EQ(r.write(bytes("12345678")), 8u);
  EXPECT_EQ(read_all(r), "12345678");
}

// An idle connection's queues cost nothing (issue 19's idle connections):
// the storage comes with the first byte put in, or the first look at the
// free space the RX path copies into, never with a read of an empty ring.
TEST_F(ring_buffer_test, StorageComesWithTheFirstByteNotWithTheRing) {
  ring_buffer r(1 << 20);
  std::array<std::byte, 4> out{};
  EXPECT_EQ(r.read(out), 0u);
  EXPECT_EQ(r.peek(0, out), 0u);
  EXPECT_TRUE(r.contiguous_at(0, 4).empty());
  r.consume(0);
  r.commit(0);
  EXPECT_FALSE(r.allocated());
  EXPECT_EQ(ring_buffer::allocated_bytes(), 0u);
  EXPECT_EQ(r.write_at(0, {}), 0u);
  EXPECT_FALSE(r.allocated());
  EXPECT_EQ(r.write(bytes("a")), 1u);
  EXPECT_TRUE(r.allocated());
  EXPECT_EQ(ring_buffer::allocated_bytes(), std::size_t(1) << 20);
  EXPECT_EQ(read_all(r), "a");

  ring_buffer rx(64);
  const auto room = rx.free_contiguous(8);  // the RX path's copy target
  EXPECT_TRUE(rx.allocated());
  ASSERT_EQ(room.size(), 8u);
  std::memcpy(room.data(), "in place", 8);
  EXPECT_EQ(rx.write(room), 8u);  // placed already: not copied again
  EXPECT_EQ(read_all(rx), "in place");

  ring_buffer none(0);
  EXPECT_TRUE(none.free_contiguous(8).empty());
  EXPECT_FALSE(none.allocated());
}

// The receive buffer's auto-tuning grows a ring in use: readable bytes
// across the wrap and out-of-order bytes past them keep their places.
TEST_F(ring_buffer_test, GrowKeepsEveryByteAtItsPlace) {
  ring_buffer r(8);
  r.write(bytes("123456"));
  r.consume(5);                                 // "6" at index 5
  r.write(bytes("abc"));                        // indexes 6, 7, 0
  ASSERT_EQ(r.write_at(1, bytes("xy")), 2u);    // past a one-byte hole: indexes 2, 3
  r.grow(16);
  EXPECT_EQ(r.capacity(), 16u);
  EXPECT_EQ(r.free(), 12u);
  EXPECT_EQ(ring_buffer::live_bytes(), 16u);
  EXPECT_EQ(ring_buffer::allocated_bytes(), 16u);
  EXPECT_EQ(as_string(r.contiguous_at(0, 100)), "6abc");  // no wrap now
  r.write(bytes("-"));
  r.commit(2);
  EXPECT_EQ(r.write(bytes("0123456789")), 9u);  // the new room, all of it
  EXPECT_EQ(read_all(r), "6abc-xy012345678");
  r.grow(4);  // never shrinks
  EXPECT_EQ(r.capacity(), 16u);
}

// A ring with no storage yet only takes the larger capacity.
TEST_F(ring_buffer_test, GrowMakesNoStorage) {
  ring_buffer r(8);
  r.grow(32);
  EXPECT_FALSE(r.allocated());
  EXPECT_EQ(r.free(), 32u);
  EXPECT_EQ(ring_buffer::live_bytes(), 32u);
  EXPECT_EQ(ring_buffer::allocated_bytes(), 0u);
}

TEST_F(ring_buffer_test, LiveBytesCountsEveryRingAndReturnsToZero) {
  {
    ring_buffer a(100);
    EXPECT_EQ(ring_buffer::live_bytes(), 100u);
    {
      ring_buffer b(50);
      EXPECT_EQ(ring_buffer::live_bytes(), 150u);
      ring_buffer c(std::move(b));
      EXPECT_EQ(ring_buffer::live_bytes(), 150u);
      EXPECT_EQ(c.capacity(), 50u);
      a = std::move(c);
      EXPECT_EQ(ring_buffer::live_bytes(), 50u);
    }
    EXPECT_EQ(ring_buffer::live_bytes(), 50u);
  }
  EXPECT_EQ(ring_buffer::live_bytes(), 0u);
}

}  // namespace
}  // namespace affine::stack::tcp
