// The MySQL basic types: length-encoded integers and strings, NUL-terminated
// strings; every read past the end is an error value and moves nothing.

#include <gtest/gtest.h>

#include "apps/mysql-proxy/wire.hh"
#include "tests/apps/mysql_proxy/bytes.hh"

namespace affine_mysql {
namespace {

using affine_mysql_test::from_hex;

TEST(mysql_wire, LengthEncodedIntegersOfEveryWidthRoundTrip) {
  for (const std::uint64_t v :
       {0ull, 250ull, 251ull, 0xffffull, 0x10000ull, 0xffffffull, 0x1000000ull, 0xffffffffffffffffull}) {
    std::vector<std::byte> out;
    put_lenenc_int(out, v);
    const std::size_t expected_size = v < 251 ? 1 : v <= 0xffff ? 3 : v <= 0xffffff ? 4 : 9;
    EXPECT_EQ(out.size(), expected_size) << v;
    wire_reader r(out);
    EXPECT_EQ(r.lenenc_int(), v);
    EXPECT_TRUE(r.empty());
  }
}

TEST(mysql_wire, LengthEncodedIntegerReadsTheDocumentedEncodings) {
  const auto b = from_hex(
      "fa"
      "fc1027"
      "fd010203"
      "fe0102030405060708");
  wire_reader r(b);
  EXPECT_EQ(r.lenenc_int(), 250u);
  EXPECT_EQ(r.lenenc_int(), 10000u);
  EXPECT_EQ(r.lenenc_int(), 0x030201u);
  EXPECT_EQ(r.lenenc_int(), 0x0807060504030201u);
}

TEST(mysql_wire, NullAndErrMarkersAreNotIntegers) {
  for (const char* hex : {"fb", "ff"}) {
    const auto b = from_hex(hex);
    wire_reader r(b);
    EXPECT_EQ(r.lenenc_int(), std::unexpected(wire_error::bad_lenenc)) << hex;
    EXPECT_EQ(r.position(), 0u);
  }
}

TEST(mysql_wire, TruncatedLengthEncodedIntegersAreErrorsAndMoveNothing) {
  for (const char* hex : {"", "fc10", "fd0102", "fe01020304050607"}) {
    const auto b = from_hex(hex);
    wire_reader r(b);
    EXPECT_EQ(r.lenenc_int(), std::unexpected(wire_error::truncated)) << hex;
    EXPECT_EQ(r.position(), 0u) << hex;
  }
}

TEST(mysql_wire, LengthEncodedStringLongerThanThePayloadIsTruncated) {
  const auto b = from_hex("05616263");  // says 5, has 3
  wire_reader r(b);
  EXPECT_EQ(r.lenenc_string(), std::unexpected(wire_error::truncated));
  EXPECT_EQ(r.position(), 0u);
  EXPECT_EQ(r.remaining(), 4u);
}

TEST(mysql_wire, LengthEncodedStringsAndFixedIntegers) {
  std::vector<std::byte> out;
  put_lenenc_string(out, "def");
  put_u16(out, 0x1234);
  put_u24(out, 0xabcdef);
  put_u32(out, 0xdeadbeef);
  put_u64(out, 0x0102030405060708);
  put_nul_string(out, "user");
  wire_reader r(out);
  EXPECT_EQ(r.lenenc_string(), "def");
  EXPECT_EQ(r.u16(), 0x1234);
  EXPECT_EQ(r.u24(), 0xabcdefu);
  EXPECT_EQ(r.u32(), 0xdeadbeefu);
  EXPECT_EQ(r.u64(), 0x0102030405060708u);
  EXPECT_EQ(r.nul_string(), "user");
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.u8(), std::unexpected(wire_error::truncated));
}

TEST(mysql_wire, NulStringWithoutItsNulIsAnError) {
  const auto b = from_hex("616263");
  wire_reader r(b);
  EXPECT_EQ(r.nul_string(), std::unexpected(wire_error::missing_nul));
  EXPECT_EQ(r.position(), 0u);
  EXPECT_EQ(r.rest_string(), "abc");
}

TEST(mysql_wire, FixedReadsPastTheEndAreErrors) {
  const auto b = from_hex("010203");
  wire_reader r(b);
  EXPECT_EQ(r.u32(), std::unexpected(wire_error::truncated));
  EXPECT_EQ(r.bytes(4), std::unexpected(wire_error::truncated));
  EXPECT_EQ(r.skip(4), std::unexpected(wire_error::truncated));
  EXPECT_EQ(r.u24(), 0x030201u);
}

}  // namespace
}  // namespace affine_mysql
