#include "stack/tcp/rto.hh"

#include <gtest/gtest.h>

namespace affine::stack::tcp {
namespace {

constexpr std::uint64_t ms = 1'000'000;

TEST(rto_test, BeforeAnySampleTheRtoIsTheInitialOneSecond) {
  rto_estimator r;
  EXPECT_FALSE(r.has_sample());
  EXPECT_EQ(r.rto_ns(), 1000 * ms);
}

TEST(rto_test, FirstSampleSetsSrttToRAndRttvarToHalfR) {
  rto_estimator r;
  r.sample(400 * ms);
  EXPECT_TRUE(r.has_sample());
  EXPECT_EQ(r.srtt_ns(), 400 * ms);
  EXPECT_EQ(r.rttvar_ns(), 200 * ms);
  EXPECT_EQ(r.rto_ns(), 400 * ms + 4 * 200 * ms);
}

TEST(rto_test, LaterSamplesUseAlphaOneEighthAndBetaOneQuarterWithTheOldSrtt) {
  rto_estimator r;
  r.sample(400 * ms);
  r.sample(800 * ms);
  // RTTVAR = 3/4 * 200 + 1/4 * |400 - 800| = 250; SRTT = 7/8 * 400 + 1/8 * 800 = 450.
  EXPECT_EQ(r.rttvar_ns(), 250 * ms);
  EXPECT_EQ(r.srtt_ns(), 450 * ms);
  EXPECT_EQ(r.rto_ns(), 450 * ms + 4 * 250 * ms);
}

TEST(rto_test, ClockGranularityFloorsTheVarianceTerm) {
  rto_estimator r({.min_ns = 0, .granularity_ns = 1 * ms});
  r.sample(2'000);  // 4 * RTTVAR = 4 us < G
  EXPECT_EQ(r.rto_ns(), 2'000 + 1 * ms);
}

TEST(rto_test, RtoBelowTheMinimumIsRaisedToIt) {
  rto_estimator r;
  r.sample(10 * ms);  // 10 + 4 * 5 = 30 ms
  EXPECT_EQ(r.rto_ns(), 200 * ms);
}

TEST(rto_test, RtoAboveTheMaximumIsCappedAtIt) {
  rto_estimator r;
  r.sample(50'000 * ms);
  EXPECT_EQ(r.rto_ns(), 60'000 * ms);
}

TEST(rto_test, InitialRtoOutsideTheBoundsIsClamped) {
  EXPECT_EQ(rto_estimator({.initial_ns = 1 * ms}).rto_ns(), 200 * ms);
  EXPECT_EQ(rto_estimator({.initial_ns = 100'000 * ms}).rto_ns(), 60'000 * ms);
}

TEST(rto_test, BackoffDoublesTheRtoOnEachExpiry) {
  rto_estimator r;
  r.sample(400 * ms);
  r.backoff();
  EXPECT_EQ(r.rto_ns(), 2400 * ms);
  r.backoff();
  EXPECT_EQ(r.rto_ns(), 4800 * ms);
  EXPECT_EQ(r.backoff_count(), 2u);
}

TEST(rto_test, BackoffIsCappedAtTheMaximumAndKeepsCounting) {
  rto_estimator r;
  for (int i = 0; i < 6; ++i) r.backoff();
  EXPECT_EQ(r.rto_ns(), 60'000 * ms);  // 64 s capped
  for (int i = 0; i < 100; ++i) r.backoff();
  EXPECT_EQ(r.rto_ns(), 60'000 * ms);
  EXPECT_EQ(r.backoff_count(), 106u);
}

TEST(rto_test, AValidSampleEndsTheBackoff) {
  rto_estimator r;
  r.backoff();
  r.backoff();
  r.sample(400 * ms);
  EXPECT_EQ(r.backoff_count(), 0u);
  EXPECT_EQ(r.rto_ns(), 1200 * ms);
}

TEST(rto_test, ResetBackoffRestoresTheBaseRto) {
  rto_estimator r;
  r.backoff();
  EXPECT_EQ(r.rto_ns(), 2000 * ms);
  r.reset_backoff();
  EXPECT_EQ(r.backoff_count(), 0u);
  EXPECT_EQ(r.rto_ns(), 1000 * ms);
}

TEST(rto_test, HugeSamplesSaturateInsteadOfOverflowing) {
  rto_estimator r;
  r.sample(UINT64_MAX);
  r.sample(0);
  r.sample(UINT64_MAX);
  EXPECT_EQ(r.rto_ns(), 60'000 * ms);
}

}  // namespace
}  // namespace affine::stack::tcp
