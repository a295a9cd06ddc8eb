// Address text (include/affine/address.hh): what RFC 4291 section 2.2
// allows is read, what it does not is refused with a reason, and every
// address is written in RFC 5952's one canonical form. inet_pton, the C
// library's reader, is the second opinion on which texts are addresses.

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

#include "affine/address.hh"

namespace affine::net {
namespace {

std::string canonical(std::string_view text) {
  const auto a = ipv6_address::parse(text);
  EXPECT_TRUE(a.has_value()) << text << ": " << (a ? "" : a.error());
  return a ? a->to_string() : "";
}

// RFC 5952 section 4 and its examples; RFC 4291 2.2's forms.
TEST(address, ipv6_text_is_written_in_rfc_5952_canonical_form) {
  EXPECT_EQ(canonical("2001:db8:0:0:0:0:2:1"), "2001:db8::2:1");                    // 4.2.1: shortest
  EXPECT_EQ(canonical("2001:0db8:0000:0000:0000:0000:0002:0001"), "2001:db8::2:1");  // 4.1: no leading zeros
  EXPECT_EQ(canonical("2001:db8:0:1:1:1:1:1"), "2001:db8:0:1:1:1:1:1");             // 4.2.2: one 0 group stays
  EXPECT_EQ(canonical("2001:0:0:1:0:0:0:1"), "2001:0:0:1::1");                      // 4.2.3: the longest run
  EXPECT_EQ(canonical("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");                // 4.2.3: the first of equals
  EXPECT_EQ(canonical("2001:DB8::AbCd"), "2001:db8::abcd");                         // 4.3: lower case
  EXPECT_EQ(canonical("::"), "::");
  EXPECT_EQ(canonical("::1"), "::1");
  EXPECT_EQ(canonical("1::"), "1::");
  EXPECT_EQ(canonical("fe80::1%7"), "fe80::1%7");
  EXPECT_EQ(canonical("0:0:0:0:0:ffff:10.0.0.1"), "::ffff:10.0.0.1");  // 5: IPv4-mapped keeps its quad
  EXPECT_EQ(canonical("::ffff:a00:1"), "::ffff:10.0.0.1");
  EXPECT_EQ(canonical("64:ff9b::192.0.2.33"), "64:ff9b::c000:221");  // only mapped addresses are dotted
  EXPECT_EQ(canonical("1:2:3:4:5:6:7:8"), "1:2:3:4:5:6:7:8");
  EXPECT_EQ(canonical("1:2:3:4:5:6:7::"), "1:2:3:4:5:6:7:0");  // "::" for one group is read, never written
}

TEST(address, ipv6_text_that_is_not_an_address_says_why) {
  const auto why = [](std::string_view text) {
    const auto a = ipv6_address::parse(text);
    return a ? std::string("(it parsed)") : a.error();
  };
  EXPECT_EQ(why("2001:db8::1::2"), "\"2001:db8::1::2\" is not an IPv6 address (like \"2001:db8::1\"): \"::\" more than once");
  EXPECT_EQ(why("1:2:3:4:5:6:7"), "\"1:2:3:4:5:6:7\" is not an IPv6 address (like \"2001:db8::1\"): fewer than 8 groups and no \"::\"");
  EXPECT_EQ(why("1:2:3:4:5:6:7:8:9"), "\"1:2:3:4:5:6:7:8:9\" is not an IPv6 address (like \"2001:db8::1\"): more than 8 groups");
  EXPECT_EQ(why("1:2:3:4::5:6:7:8"), "\"1:2:3:4::5:6:7:8\" is not an IPv6 address (like \"2001:db8::1\"): \"::\" with 8 groups besides");
  EXPECT_EQ(why("12345::"), "\"12345::\" is not an IPv6 address (like \"2001:db8::1\"): a group of more than 4 hex digits");
  EXPECT_EQ(why(":1::"), "\":1::\" is not an IPv6 address (like \"2001:db8::1\"): a single ':' at the start");
  EXPECT_EQ(why("1::2:"), "\"1::2:\" is not an IPv6 address (like \"2001:db8::1\"): a single ':' at the end");
  EXPECT_EQ(why("1::g"), "\"1::g\" is not an IPv6 address (like \"2001:db8::1\"): 'g' is not a hex digit");
  EXPECT_EQ(why("::1.2.3.4:5"), "\"::1.2.3.4:5\" is not an IPv6 address (like \"2001:db8::1\"): an IPv4 part must come last");
  EXPECT_EQ(why("::1.2.3"), "\"::1.2.3\" is not an IPv6 address (like \"2001:db8::1\"): its IPv4 part is not a dotted quad");
  EXPECT_EQ(why("fe80::1%"), "\"fe80::1%\" is not an IPv6 address (like \"2001:db8::1\"): the zone after '%' must be an interface index, 1 or more");
  EXPECT_EQ(why("fe80::1%eth0"), "\"fe80::1%eth0\" is not an IPv6 address (like \"2001:db8::1\"): the zone after '%' must be an interface index, 1 or more");
  EXPECT_EQ(why(""), "\"\" is not an IPv6 address (like \"2001:db8::1\"): it is empty");
  // Found by tests/fuzz/address.cc: the text is quoted so the message stays one line.
  EXPECT_EQ(why("1::\n\"\\"), "\"1::\\x0a\\\"\\\\\" is not an IPv6 address (like \"2001:db8::1\"): '\\x0a' is not a hex digit");
  EXPECT_EQ(why("1:2:3:4:5:6:7:1.2.3.4"), "\"1:2:3:4:5:6:7:1.2.3.4\" is not an IPv6 address (like \"2001:db8::1\"): more than 8 groups");
}

// The C library agrees on which texts are IPv6 addresses and on their
// bytes; ours are written back and read again unchanged.
TEST(address, ipv6_parse_agrees_with_inet_pton) {
  for (const char* text :
       {"::", "::1", "1::", "::ffff:1.2.3.4", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6::8", "1::2:3:4:5:6:7", "::2:3:4:5:6:7:8",
        "1:2:3:4:5:6:1.2.3.4", "::1.2.3.4", "fe80::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "1:2:3:4:5:6:7:8:9",
        "1::2::3", ":::", "1:::2", "::1:", ":1", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "::1.2.3.04", "::1.2.3.256",
        "::01.2.3.4", "0x1::", "1 ::", "::12345", "g::", "1.2.3.4", "::1.2.3.4.5", "1:2:3:4:5:6:7:1.2.3.4"}) {
    in6_addr c{};
    const bool libc = inet_pton(AF_INET6, text, &c) == 1;
    const auto ours = ipv6_address::parse(text);
    EXPECT_EQ(ours.has_value(), libc) << text << ": " << (ours ? ours->to_string() : ours.error());
    if (!ours || !libc) continue;
    EXPECT_EQ(std::memcmp(ours->bytes.data(), c.s6_addr, 16), 0) << text;
    const auto again = ipv6_address::parse(ours->to_string());
    ASSERT_TRUE(again.has_value()) << ours->to_string();
    EXPECT_EQ(*again, *ours) << text;
  }
}

TEST(address, ipv4_parse_agrees_with_inet_pton) {
  for (const char* text : {"0.0.0.0", "10.77.0.2", "255.255.255.255", "1.2.3.04", "01.2.3.4", "1.2.3.256", "1.2.3",
                           "1.2.3.4.5", "1..2.3", "+1.2.3.4", " 1.2.3.4", "1.2.3.4 ", "0x1.2.3.4", "1.2.3.-4", ""}) {
    in_addr c{};
    const bool libc = inet_pton(AF_INET, text, &c) == 1;
    const auto ours = ipv4_address::parse(text);
    EXPECT_EQ(ours.has_value(), libc) << '"' << text << '"';
    if (ours && libc) {
      EXPECT_EQ(ours->value, ntohl(c.s_addr)) << text;
    }
  }
}

TEST(address, ipv6_kinds_and_the_ipv4_mapped_form) {
  const ipv6_address mapped = ipv6_address::v4_mapped(ipv4_address{0x0a000001});
  EXPECT_EQ(mapped.to_string(), "::ffff:10.0.0.1");
  EXPECT_EQ(mapped.mapped_v4(), ipv4_address{0x0a000001});
  EXPECT_FALSE(loopback_v6.mapped_v4().has_value());
  EXPECT_TRUE(ipv6_address::parse("::")->is_unspecified());
  EXPECT_TRUE(loopback_v6.is_loopback());
  EXPECT_EQ(loopback_v6.to_string(), "::1");
  EXPECT_TRUE(ipv6_address::parse("fe80::1")->is_link_local());
  EXPECT_TRUE(ipv6_address::parse("febf::1")->is_link_local());
  EXPECT_FALSE(ipv6_address::parse("fec0::1")->is_link_local());
  EXPECT_TRUE(ipv6_address::parse("ff02::1:ff00:2")->is_multicast());
  // The zone is part of the address: fe80::1 on two links are two addresses.
  EXPECT_NE(*ipv6_address::parse("fe80::1%1"), *ipv6_address::parse("fe80::1%2"));
}

TEST(address, either_family_from_text) {
  const auto v4 = address::parse("10.77.0.2");
  ASSERT_TRUE(v4.has_value());
  EXPECT_TRUE(v4->is_v4());
  EXPECT_EQ(v4->v4(), ipv4_address{0x0a4d0002});
  EXPECT_EQ(v4->to_string(), "10.77.0.2");
  const auto v6 = address::parse("[FD77::2]");
  ASSERT_TRUE(v6.has_value()) << v6.error();
  EXPECT_TRUE(v6->is_v6());
  EXPECT_EQ(v6->to_string(), "fd77::2");
  EXPECT_EQ(address::parse("10.77.0.256").error(), "\"10.77.0.256\" is not an IPv4 address (like \"10.77.0.2\")");
  EXPECT_FALSE(address::parse("[::1").has_value());
  EXPECT_TRUE(address{}.is_unspecified());
  EXPECT_TRUE(address{any_address_v6}.is_unspecified());
  EXPECT_LT(address{loopback}, address{any_address_v6});  // IPv4 before IPv6
  const address from_v4 = loopback;                       // an ipv4_address is an address
  EXPECT_EQ(from_v4.v4(), loopback);
}

// RFC 3986 3.2.2's brackets around an IPv6 literal, as URLs and the
// proxy's addresses write them.
TEST(address, endpoints_take_either_family_and_write_brackets_around_ipv6) {
  const auto e4 = endpoint::parse("10.77.0.2:6033");
  ASSERT_TRUE(e4.has_value()) << e4.error();
  EXPECT_EQ(*e4, (endpoint{ipv4_address{0x0a4d0002}, 6033}));
  EXPECT_EQ(e4->to_string(), "10.77.0.2:6033");
  const auto e6 = endpoint::parse("[FD77::0002]:80");
  ASSERT_TRUE(e6.has_value()) << e6.error();
  EXPECT_TRUE(e6->addr.is_v6());
  EXPECT_EQ(e6->to_string(), "[fd77::2]:80");
  const auto zoned = endpoint::parse("[fe80::1%3]:0");
  ASSERT_TRUE(zoned.has_value()) << zoned.error();
  EXPECT_EQ(zoned->addr.v6().scope_id, 3u);
  EXPECT_EQ(zoned->to_string(), "[fe80::1%3]:0");
  EXPECT_EQ(endpoint::parse("[::]:6033")->to_string(), "[::]:6033");

  const std::pair<std::string_view, std::string_view> refused[] = {
      {"10.77.0.2", "no port"},
      {"fd77::2:80", "an IPv6 address takes brackets before a port"},
      {"[fd77::2:80", "unbalanced brackets"},
      {"fd77::2]:80", "unbalanced brackets"},
      {"[:80", "unbalanced brackets"},
      {"[10.0.0.1]:80", "brackets hold an IPv6 address"},
      {"10.0.0.1:65536", "the port is not a number in 0..65535"},
      {"10.0.0.1:", "the port is not a number in 0..65535"},
      {"10.0.0.1:+1", "the port is not a number in 0..65535"},
      {"10.0.0.1: 1", "the port is not a number in 0..65535"},
  };
  for (const auto& [text, why] : refused) {
    const auto e = endpoint::parse(text);
    ASSERT_FALSE(e.has_value()) << text;
    EXPECT_NE(e.error().find(why), std::string::npos) << text << ": " << e.error();
  }
  // The address's own error comes through.
  EXPECT_NE(endpoint::parse("db:3306").error().find("is not an IPv4 address"), std::string::npos);
}

}  // namespace
}  // namespace affine::net
