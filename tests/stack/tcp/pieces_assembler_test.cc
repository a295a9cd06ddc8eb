#include "stack/tcp/assembler.hh"

#include <gtest/gtest.h>

#include <vector>

namespace affine::stack::tcp {
namespace {

using ranges_t = std::vector<assembler::range>;
using add_result = assembler::add_result;

ranges_t ranges_of(const assembler& a) { return {a.ranges().begin(), a.ranges().end()}; }

assembler holding(const ranges_t& ranges, std::size_t max_ranges = 32) {
  assembler a(max_ranges);
  for (const auto& [offset, len] : ranges) EXPECT_EQ(a.add(offset, len), add_result::added);
  return a;
}

TEST(assembler_test, InOrderSegmentIsTakenAtOnce) {
  assembler a;
  EXPECT_EQ(a.add(0, 10), add_result::added);
  EXPECT_EQ(a.take_front(), 10u);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.take_front(), 0u);
}

TEST(assembler_test, OutOfOrderSegmentWaitsUntilTheHoleIsFilled) {
  assembler a;
  EXPECT_EQ(a.add(10, 5), add_result::added);
  EXPECT_EQ(a.take_front(), 0u);
  EXPECT_EQ(a.add(0, 10), add_result::added);
  EXPECT_EQ(ranges_of(a), (ranges_t{{0, 15}}));
  EXPECT_EQ(a.take_front(), 15u);
  EXPECT_TRUE(a.empty());
}

TEST(assembler_test, HolesFilledOneByOneMergeIntoOneRange) {
  assembler a = holding({{10, 5}, {30, 5}, {20, 5}});
  EXPECT_EQ(ranges_of(a), (ranges_t{{10, 5}, {20, 5}, {30, 5}}));
  EXPECT_EQ(a.add(14, 6), add_result::added);
  EXPECT_EQ(ranges_of(a), (ranges_t{{10, 15}, {30, 5}}));
  EXPECT_EQ(a.add(25, 5), add_result::added);
  EXPECT_EQ(ranges_of(a), (ranges_t{{10, 25}}));
}

TEST(assembler_test, OverlappingSegmentsExtendTheRange) {
  assembler a = holding({{10, 10}});
  EXPECT_EQ(a.add(15, 10), add_result::added);
  EXPECT_EQ(ranges_of(a), (ranges_t{{10, 15}}));
  EXPECT_EQ(a.add(5, 10), add_result::added);
  EXPECT_EQ(ranges_of(a), (ranges_t{{5, 20}}));
}

TEST(assembler_test, SegmentSpanningSeveralRangesMergesThem) {
  assembler a = holding({{10, 2}, {20, 2}, {30, 2}, {50, 2}});
  EXPECT_EQ(a.add(5, 40), add_result::added);
  EXPECT_EQ(ranges_of(a), (ranges_t{{5, 40}, {50, 2}}));
}

TEST(assembler_test, DuplicateSegmentsChangeNothing) {
  assembler a = holding({{10, 10}});
  EXPECT_EQ(a.add(10, 10), add_result::duplicate);
  EXPECT_EQ(a.add(12, 5), add_result::duplicate);
  EXPECT_EQ(a.add(19, 1), add_result::duplicate);
  EXPECT_EQ(a.add(30, 0), add_result::duplicate);
  EXPECT_EQ(ranges_of(a), (ranges_t{{10, 10}}));
  EXPECT_EQ(a.add(9, 1), add_result::added);  // adjacent: one new byte
  EXPECT_EQ(ranges_of(a), (ranges_t{{9, 11}}));
}

TEST(assembler_test, RangeBoundHitRefusesANewRangeAndKeepsTheOthers) {
  assembler a = holding({{10, 1}, {20, 1}}, 2);
  EXPECT_EQ(a.add(30, 1), add_result::too_many_ranges);
  EXPECT_EQ(a.add(0, 1), add_result::too_many_ranges);
  EXPECT_EQ(ranges_of(a), (ranges_t{{10, 1}, {20, 1}}));
  // Data that joins an existing range needs no new slot.
  EXPECT_EQ(a.add(11, 3), add_result::added);
  EXPECT_EQ(a.add(14, 6), add_result::added);
  EXPECT_EQ(ranges_of(a), (ranges_t{{10, 11}}));
  EXPECT_EQ(a.add(30, 1), add_result::added);
  EXPECT_EQ(a.range_count(), 2u);
}

TEST(assembler_test, TakeFrontAfterFillingTheFirstHoleRebasesLaterRanges) {
  assembler a = holding({{10, 5}, {20, 5}, {0, 10}});
  EXPECT_EQ(a.take_front(), 15u);
  EXPECT_EQ(ranges_of(a), (ranges_t{{5, 5}}));
  EXPECT_EQ(a.take_front(), 0u);
}

TEST(assembler_test, AdvanceTrimsAStraddlingRangeAndDropsPassedOnes) {
  assembler a = holding({{10, 5}, {20, 5}, {40, 5}});
  a.advance(12);
  EXPECT_EQ(ranges_of(a), (ranges_t{{0, 3}, {8, 5}, {28, 5}}));
  EXPECT_EQ(a.take_front(), 3u);
  a.advance(20);
  EXPECT_EQ(ranges_of(a), (ranges_t{{5, 5}}));
  a.advance(10);
  EXPECT_TRUE(a.empty());
}

TEST(assembler_test, ClearDropsEveryRange) {
  assembler a = holding({{10, 5}, {20, 5}});
  a.clear();
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.range_count(), 0u);
}

}  // namespace
}  // namespace affine::stack::tcp
