// The MLDv2 report (stack/wire/mld.hh) read like RFC 3810 5.2: written
// here, it is the report Linux sends, and it parses as what it is.

#include "stack/wire/mld.hh"

#include <gtest/gtest.h>

#include <vector>

#include "stack/wire/ndp.hh"
#include "tests/stack/wire/frames.hh"
#include "tests/stack/wire/ipv6_packets.hh"

namespace affine::stack {
namespace {

using test::a_link_local;
using test::captured_ipv6;
using test::ip6;

// RFC 3810 5.2, 6.1: a's join of its solicited-node group, one CHANGE_TO_
// EXCLUDE_MODE record with no sources, is byte for byte the one Linux sent.
TEST(Mld, JoinReportMatchesLinux_RFC3810_5_2) {
  const captured_ipv6 c(test::mld_report_hex);
  const mld_record join = mld_join(solicited_node(a_link_local));
  std::vector<std::byte> out(mld_report_length(1));
  ASSERT_EQ(emit_mld_report(a_link_local, std::span(&join, 1), out), c.packet().size());
  EXPECT_TRUE(std::ranges::equal(out, c.packet()));
  // RFC 2464 7: the frame went to all MLDv2 routers' Ethernet group.
  const mac_address routers_mac = multicast_mac(all_mldv2_routers);
  EXPECT_TRUE(std::ranges::equal(c.frame().first(6), std::as_bytes(std::span(routers_mac))));
}

// RFC 3810 5: hop limit 1, a Hop-by-Hop header with the Router Alert
// option (RFC 2711: value 0, MLD), to ff02::16, from a link-local address
// or, before the interface has one, the unspecified address; and the
// records of RFC 3810 5.2.4 with the checksum over the pseudo-header.
TEST(Mld, ReportParsesAsIpv6WithRouterAlertAndIcmpv6_RFC3810_5) {
  const std::vector<mld_record> records{mld_join(ip6("ff02::1:ff00:1")), mld_leave(ip6("ff05::1:3")),
                                        mld_join(ip6("ff02::fb"))};
  for (const auto& src : {a_link_local, ipv6_bytes{}}) {
    std::vector<std::byte> out(mld_report_length(records.size()));
    ASSERT_EQ(emit_mld_report(src, records, out), out.size());
    const auto ip = ipv6_view::parse(out);
    ASSERT_TRUE(ip);
    EXPECT_EQ(ip->hop_limit(), 1);
    EXPECT_EQ(ip->src(), src);
    EXPECT_EQ(ip->dst(), all_mldv2_routers);
    EXPECT_EQ(ip->next(), next_header::hop_by_hop);
    const auto options = ip->payload().subspan(2, 6);
    EXPECT_TRUE(std::ranges::equal(options, test::bytes_of({5, 2, 0, 0, 1, 0})));  // Router Alert, PadN
    const auto upper = walk_ipv6_chain(*ip);
    ASSERT_TRUE(upper);
    EXPECT_EQ(upper->protocol, next_header::icmpv6);
    EXPECT_EQ(upper->offset, 48u);
    const auto v = icmpv6_view::parse(upper->payload, src, all_mldv2_routers);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->type(), icmpv6_type::mldv2_report);
    const auto report = v->bytes();
    EXPECT_EQ(load_be16(report.data() + 6), records.size());
    for (std::size_t k = 0; k < records.size(); ++k) {
      const auto r = report.subspan(8 + 20 * k, 20);
      EXPECT_EQ(std::uint8_t(r[0]), std::uint8_t(records[k].type)) << k;
      EXPECT_EQ(r[1], std::byte{0}) << k;             // Aux Data Len
      EXPECT_EQ(load_be16(r.data() + 2), 0) << k;     // Number of Sources
      EXPECT_TRUE(std::ranges::equal(r.subspan(4), std::as_bytes(std::span(records[k].group)))) << k;
    }
  }
  EXPECT_EQ(std::uint8_t(mld_leave(all_nodes).type), 3);  // CHANGE_TO_INCLUDE_MODE
  EXPECT_EQ(std::uint8_t(mld_join(all_nodes).type), 4);   // CHANGE_TO_EXCLUDE_MODE
}

TEST(Mld, ReportThatDoesNotFitIsRefused_RFC3810_5_2_15) {
  const std::vector<mld_record> records(3, mld_join(ip6("ff02::fb")));
  std::vector<std::byte> out(mld_report_length(3) - 1);
  EXPECT_EQ(emit_mld_report(a_link_local, records, out).error(), emit_error::buffer_too_small);
  // More records than a Payload Length counts.
  const std::vector<mld_record> many((0xffff - 16) / 20 + 1, mld_join(ip6("ff02::fb")));
  std::vector<std::byte> big(mld_report_length(many.size()));
  EXPECT_EQ(emit_mld_report(a_link_local, many, big).error(), emit_error::too_long);
  const std::vector<mld_record> most((0xffff - 16) / 20, mld_join(ip6("ff02::fb")));
  EXPECT_EQ(emit_mld_report(a_link_local, most, big), mld_report_length(most.size()));
}

}  // namespace
}  // namespace affine::stack
