// The SACK sender's scoreboard (RFC 2018 3, RFC 2883, RFC 6675 4): what it
// keeps, what it rejects, and the questions recovery and RACK ask of it, in both
// sequence spaces (one starting just below 2^32, so every range wraps).

#include "stack/tcp/scoreboard.hh"

#include <gtest/gtest.h>

#include <vector>

namespace affine::stack::tcp {
namespace {

constexpr std::uint32_t mss = 1000;

class scoreboard_test : public ::testing::TestWithParam<std::uint32_t> {
 protected:
  scoreboard_test() { sb.reset(una); }
  seq32 at(std::uint32_t offset) const { return una + offset; }
  scoreboard::update sack(std::vector<std::pair<std::uint32_t, std::uint32_t>> blocks, std::uint32_t acked = 0) {
    std::vector<tcp_sack_block> b;
    for (auto [l, r] : blocks) b.push_back({una + l, una + r});
    return sb.take(b, una + acked, una + sent);
  }

  seq32 una{GetParam()};
  std::uint32_t sent = 10 * mss;  // SND.MAX - SND.UNA
  scoreboard sb{8};
};

TEST_P(scoreboard_test, BlocksAreKeptMergedAndCountedOnce_RFC2018_3) {
  EXPECT_EQ(sack({{1000, 2000}}).newly_sacked, 1000u);
  EXPECT_EQ(sack({{1000, 2000}}).newly_sacked, 0u);           // a repeat is no news
  EXPECT_EQ(sack({{1500, 3000}, {5000, 6000}}).newly_sacked, 2000u);
  EXPECT_EQ(sb.range_count(), 2u);
  EXPECT_EQ(sb.sacked_bytes(), 3000u);
  EXPECT_EQ(sb.high_sacked(), at(6000));
  EXPECT_EQ(sack({{3000, 5000}}).newly_sacked, 2000u);        // fills the gap: one range
  EXPECT_EQ(sb.range_count(), 1u);
  EXPECT_EQ(sb.sacked_run_end(at(1000)), at(6000));
  EXPECT_EQ(sb.sacked_run_end(at(999)), std::nullopt);
}

TEST_P(scoreboard_test, BlocksEmptyInvertedOrPastSndMaxAreRejected) {
  std::vector<tcp_sack_block> bad{{at(2000), at(2000)}, {at(3000), at(2000)}, {at(9000), at(11000)},
                                  {at(5000), at(5000 + 0x80000000u)}};
  const scoreboard::update u = sb.take(bad, una, una + sent);
  EXPECT_EQ(u.rejected, 4u);
  EXPECT_EQ(u.newly_sacked, 0u);
  EXPECT_TRUE(sb.empty());
}

TEST_P(scoreboard_test, ABlockReachingBelowSndUnaIsCutThere) {
  sb.advance(at(2000));
  std::vector<tcp_sack_block> b{{at(1000), at(3000)}, {at(500), at(1500)}};
  const scoreboard::update u = sb.take(b, at(2000), una + sent);
  EXPECT_FALSE(u.dsack);  // the first block reaches past SND.UNA
  EXPECT_EQ(u.newly_sacked, 1000u);
  EXPECT_EQ(sb.sacked_within(at(2000), at(3000)), 1000u);
}

TEST_P(scoreboard_test, DsackBelowTheCumulativeAckIsRecognisedNotKept_RFC2883_4) {
  const scoreboard::update u = sack({{0, 1000}, {3000, 4000}}, 2000);
  EXPECT_TRUE(u.dsack);
  EXPECT_EQ(u.newly_sacked, 1000u);  // the second block is news
  EXPECT_EQ(sb.sacked_bytes(), 1000u);
}

TEST_P(scoreboard_test, DsackInsideTheSecondBlockIsRecognised_RFC2883_4) {
  sack({{3000, 6000}});
  const scoreboard::update u = sack({{4000, 5000}, {3000, 6000}});
  EXPECT_TRUE(u.dsack);
  EXPECT_EQ(u.newly_sacked, 0u);
  EXPECT_EQ(sb.sacked_bytes(), 3000u);
}

TEST_P(scoreboard_test, TheCumulativeAckTrimsAndDropsRanges) {
  sack({{1000, 2000}, {3000, 5000}});
  sb.advance(at(4000));
  EXPECT_EQ(sb.range_count(), 1u);
  EXPECT_EQ(sb.sacked_bytes(), 1000u);
  EXPECT_EQ(sb.una(), at(4000));
  EXPECT_EQ(sb.high_sacked(), at(5000));
  sb.advance(at(6000));
  EXPECT_TRUE(sb.empty());
  EXPECT_EQ(sb.sacked_bytes(), 0u);
  EXPECT_EQ(sb.high_sacked(), at(6000));
}

// CVE-2019-11477/11478: tiny SACKed pieces cannot grow or fragment anything
// past the bound; a block that merges is still taken when the bound is hit.
TEST_P(scoreboard_test, TinyPiecesStopAtTheRangeBound) {
  sent = 100'000;
  unsigned full = 0;
  for (std::uint32_t k = 0; k < 1000; ++k) full += sack({{2 * k + 1, 2 * k + 2}}).full;
  EXPECT_EQ(sb.range_count(), 8u);
  EXPECT_EQ(full, 1000u - 8u);
  EXPECT_EQ(sb.sacked_bytes(), 8u);
  EXPECT_EQ(sack({{1, 16}}).newly_sacked, 7u);  // merges all eight: news, and room again
  EXPECT_EQ(sb.range_count(), 1u);
}

// RACK needs to know which segments one ACK delivered: the runs of each
// block that were not SACKed before, and nothing it already had.
TEST_P(scoreboard_test, AnUpdateSaysWhereTheNewlySackedBytesLie) {
  sack({{2000, 3000}, {5000, 6000}});
  const scoreboard::update u = sack({{1000, 7000}});
  ASSERT_EQ(u.fresh_count, 3u);
  EXPECT_FALSE(u.fresh_overflow);
  EXPECT_EQ(u.fresh[0].begin, at(1000));
  EXPECT_EQ(u.fresh[0].end, at(2000));
  EXPECT_EQ(u.fresh[1].begin, at(3000));
  EXPECT_EQ(u.fresh[1].end, at(5000));
  EXPECT_EQ(u.fresh[2].begin, at(6000));
  EXPECT_EQ(u.fresh[2].end, at(7000));
  EXPECT_EQ(sack({{1000, 7000}}).fresh_count, 0u);  // a repeat delivers nothing
}

TEST_P(scoreboard_test, ADsackSaysWhichBytesItReports_RFC2883) {
  const scoreboard::update u = sack({{500, 800}}, 1000);
  EXPECT_TRUE(u.dsack);
  EXPECT_EQ(u.dsack_range.begin, at(500));
  EXPECT_EQ(u.dsack_range.end, at(800));
  EXPECT_EQ(u.fresh_count, 0u);
}

TEST_P(scoreboard_test, HolesAreWalkedInOrderBelowTheHighestSack) {
  sack({{1000, 2000}, {4000, 5000}});
  EXPECT_EQ(sb.hole_from(una), (std::pair{at(0), at(1000)}));
  EXPECT_EQ(sb.hole_from(at(500)), (std::pair{at(500), at(1000)}));
  EXPECT_EQ(sb.hole_from(at(1000)), (std::pair{at(2000), at(4000)}));
  EXPECT_EQ(sb.hole_from(at(4500)), std::nullopt);  // above the highest SACK: no hole
}

TEST_P(scoreboard_test, ClearForgetsEverySackAfterReneging_RFC2018_8) {
  sack({{1000, 4000}});
  sb.clear();
  EXPECT_TRUE(sb.empty());
  EXPECT_EQ(sb.sacked_bytes(), 0u);
  EXPECT_EQ(sb.high_sacked(), una);
  EXPECT_EQ(sack({{1000, 4000}}).newly_sacked, 3000u);  // told again, taken again
}

INSTANTIATE_TEST_SUITE_P(spaces, scoreboard_test, ::testing::Values(1000u, 0xfffffc18u),
                         [](const auto& info) { return info.param == 1000u ? "normal" : "wrap"; });

}  // namespace
}  // namespace affine::stack::tcp
