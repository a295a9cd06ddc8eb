// The floor a machine's stalls put under one request/response flow
// (bench/stall/floor.hh): the stalls of the CPUs merge into one list, and
// a transaction is lengthened by each stall it meets, by exactly the part
// of the stall it meets.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "bench/stall/floor.hh"

namespace affine::bench::stall {
namespace {

constexpr std::uint64_t us = 1'000;
constexpr std::uint64_t s = 1'000'000'000;

TEST(StallFloor, StallsOfBothCpusAtOnceAreOneStall) {
  // CPU 0's tick overlaps CPU 1's; a later stall of CPU 1 stands alone.
  const auto merged = merge_stalls({{100 * us, 130 * us}, {900 * us, 905 * us}, {110 * us, 140 * us}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].from_ns, 100 * us);
  EXPECT_EQ(merged[0].to_ns, 140 * us);
  EXPECT_EQ(merged[1].from_ns, 900 * us);
  EXPECT_EQ(merged[1].to_ns, 905 * us);
}

TEST(StallFloor, WithoutStallsEveryTransactionTakesItsRoundTrip) {
  const auto f = model_rr_floor({}, 0, s, 100'000);  // 10 us each
  EXPECT_EQ(f.transactions, 100'000u);
  EXPECT_EQ(f.lengthened, 0u);
  EXPECT_DOUBLE_EQ(f.p99_us, 10.0);
  EXPECT_DOUBLE_EQ(f.p999_us, 10.0);
  EXPECT_DOUBLE_EQ(f.p9999_us, 10.0);
}

TEST(StallFloor, AStallLengthensTheTransactionItCatchesByItsLength) {
  // 10 us transactions from 0: the one in flight at 25 us (20 to 30 us)
  // waits the stall out, 20 + 5 + 40 + 5 = 70 us; the next begins there.
  const auto f = model_rr_floor({{25 * us, 65 * us}}, 0, 100 * us, 100'000);
  EXPECT_EQ(f.lengthened, 1u);
  EXPECT_EQ(f.transactions, 6u);  // ends at 10, 20, 70, 80, 90, 100 us
}

TEST(StallFloor, AQuantileLandsInTheStallsOnceTheyOutnumberItsShare) {
  // 100,000 transactions a second of 10 us, and a 20 us stall every 5 ms:
  // 200 a second, 0.2 % of the transactions. The p99.9 (0.1 %) is a
  // transaction and a stall; the p99 is still the round trip; the
  // p99.99 too is in the stalls.
  std::vector<interval> stalls;
  for (std::uint64_t t = 3 * us; t < s; t += 5'000 * us) stalls.push_back({t, t + 20 * us});
  const auto f = model_rr_floor(merge_stalls(stalls), 0, s, 100'000);
  EXPECT_EQ(f.lengthened, 200u);
  EXPECT_DOUBLE_EQ(f.p99_us, 10.0);
  EXPECT_DOUBLE_EQ(f.p999_us, 30.0);
  EXPECT_DOUBLE_EQ(f.p9999_us, 30.0);
  // Ten times the rate: the same stalls are 0.02 % of the transactions,
  // under the p99.9's share, and it stays at the round trip.
  const auto faster = model_rr_floor(merge_stalls(stalls), 0, s, 1'000'000);
  EXPECT_EQ(faster.lengthened, 200u);
  EXPECT_DOUBLE_EQ(faster.p999_us, 1.0);
  EXPECT_DOUBLE_EQ(faster.p9999_us, 21.0);
}

}  // namespace
}  // namespace affine::bench::stall
