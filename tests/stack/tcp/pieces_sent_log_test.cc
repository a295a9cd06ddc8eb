// The sent log (sent_log.hh): records in sequence order, found by binary
// search, popped from the front, bounded, in both sequence spaces (one
// starting just below 2^32, so the records wrap).

#include "stack/tcp/sent_log.hh"

#include <gtest/gtest.h>

namespace affine::stack::tcp {
namespace {

class sent_log_test : public ::testing::TestWithParam<std::uint32_t> {
 protected:
  seq32 at(std::uint32_t offset) const { return una + offset; }
  seq32 una{GetParam()};
};

TEST_P(sent_log_test, AConnectionThatNeverSentHoldsNoStorage) {
  sent_log log;
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(log.first_ending_after(una), 0u);
}

TEST_P(sent_log_test, RecordsAreFoundByWhereTheyEnd) {
  sent_log log;
  for (std::uint32_t i = 0; i < 100; ++i) ASSERT_TRUE(log.append(at(i * 1000), at(i * 1000 + 1000), i));
  ASSERT_EQ(log.size(), 100u);
  EXPECT_EQ(log.first_ending_after(at(0)), 0u);
  EXPECT_EQ(log.first_ending_after(at(999)), 0u);
  EXPECT_EQ(log.first_ending_after(at(1000)), 1u);  // record 0 ends at 1000: not after it
  EXPECT_EQ(log.first_ending_after(at(54321)), 54u);
  EXPECT_EQ(log.first_ending_after(at(100'000)), 100u);
  EXPECT_EQ(log[54].xmit_ns, 54u);
}

TEST_P(sent_log_test, PoppingAndAppendingKeepsTheOrderAcrossTheRing) {
  sent_log log;
  std::uint32_t next = 0;
  std::uint32_t front = 0;
  for (int round = 0; round < 1000; ++round) {
    for (int k = 0; k < 3; ++k, ++next) ASSERT_TRUE(log.append(at(next * 100), at(next * 100 + 100), next));
    for (int k = 0; k < 2; ++k, ++front) {
      ASSERT_EQ(log.front().begin, at(front * 100));
      log.pop_front();
    }
  }
  ASSERT_EQ(log.size(), next - front);
  for (std::size_t i = 0; i < log.size(); ++i) EXPECT_EQ(log[i].begin, at((front + std::uint32_t(i)) * 100));
}

TEST_P(sent_log_test, AtTheBoundATransmissionJoinsTheLastRecord) {
  sent_log log(4);
  for (std::uint32_t i = 0; i < 4; ++i) ASSERT_TRUE(log.append(at(i * 10), at(i * 10 + 10), i));
  EXPECT_FALSE(log.append(at(40), at(50), 7));
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log.back().begin, at(30));
  EXPECT_EQ(log.back().end, at(50));
  EXPECT_EQ(log.back().xmit_ns, 7u);  // the later time: its loss is found later, never early
}

INSTANTIATE_TEST_SUITE_P(spaces, sent_log_test, ::testing::Values(1000u, 0xfffff000u),
                         [](const auto& info) { return info.param == 1000u ? "normal" : "wrap"; });

}  // namespace
}  // namespace affine::stack::tcp
