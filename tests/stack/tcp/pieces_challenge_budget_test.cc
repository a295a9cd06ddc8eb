// The stack's challenge-ACK budget (RFC 5961 7, CVE-2016-5696): about
// per_second a second, each second's size drawn anew, so that the count
// one connection sees is noise about the others.

#include "stack/tcp/challenge_budget.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace affine::stack::tcp {
namespace {

constexpr std::uint64_t s = 1'000'000'000;

unsigned taken_in(challenge_budget& b, std::uint64_t second) {
  unsigned n = 0;
  while (b.take(second * s + n) && n < 1000) ++n;
  return n;
}

TEST(challenge_budget, EachSecondAllowsHalfToOneAndAHalfTimesTheRate) {
  challenge_budget b(100, 1);
  std::vector<unsigned> per_second;
  for (std::uint64_t t = 1; t <= 200; ++t) per_second.push_back(taken_in(b, t));
  EXPECT_GE(*std::ranges::min_element(per_second), 50u);
  EXPECT_LE(*std::ranges::max_element(per_second), 150u);
  // Drawn anew each second: not one fixed count an attacker could subtract.
  EXPECT_GT(*std::ranges::max_element(per_second) - *std::ranges::min_element(per_second), 50u);
  double mean = 0;
  for (unsigned n : per_second) mean += n;
  mean /= double(per_second.size());
  EXPECT_NEAR(mean, 100, 10);
}

TEST(challenge_budget, ASpentSecondDeniesAndCountsUntilTheNext) {
  challenge_budget b(10, 2);
  const unsigned n = taken_in(b, 5);
  EXPECT_FALSE(b.take(5 * s + 999'999'999));
  EXPECT_EQ(b.denied(), 2u);  // the one that ended taken_in, and this one
  EXPECT_GE(n, 5u);
  EXPECT_TRUE(b.take(6 * s));
}

TEST(challenge_budget, ZeroMeansNoBound) {
  challenge_budget b(0, 3);
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(b.take(std::uint64_t(i)));
  EXPECT_EQ(b.denied(), 0u);
}

}  // namespace
}  // namespace affine::stack::tcp
