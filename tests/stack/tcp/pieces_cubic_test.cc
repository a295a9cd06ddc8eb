// CUBIC (RFC 9438) and HyStart++ (RFC 9406), driven ACK by ACK at virtual
// time: the window against the RFC's W_cubic(t), its Reno-friendly region,
// the reductions, and slow start's delay-based exit.

#include "stack/tcp/cubic.hh"

#include <gtest/gtest.h>

#include <cmath>

namespace affine::stack::tcp {
namespace {

constexpr std::uint32_t mss = 1000;
constexpr std::uint64_t ms = 1'000'000;

// A sender that keeps cwnd full and gets one ACK per segment, evenly spread
// over each round trip: what the controller sees from a bulk flow.
struct flow {
  cubic cc;
  std::uint64_t now_ns = 0;
  std::uint64_t rtt_ns = 100 * ms;
  seq32 una{1}, snd_max{1};

  flow() {
    cc.init(mss, 0);
    snd_max = una + cc.cwnd();
  }
  void ack(std::uint64_t rtt = 0, std::uint32_t bytes = mss) {
    una += bytes;
    cc.on_ack({.bytes_acked = bytes,
               .flight_size = std::uint32_t(snd_max - una) + bytes,
               .now_ns = now_ns,
               .rtt_ns = rtt != 0 ? rtt : rtt_ns,
               .srtt_ns = rtt_ns,
               .ack = una,
               .snd_max = snd_max});
    snd_max = seq_max(snd_max, una + cc.cwnd());
  }
  // One round trip: every segment of the window acknowledged.
  void round(std::uint64_t rtt = 0) {
    const std::uint32_t n = std::max<std::uint32_t>(cc.cwnd() / mss, 1);
    for (std::uint32_t i = 0; i < n; ++i) {
      now_ns += (rtt != 0 ? rtt : rtt_ns) / n;
      ack(rtt);
    }
  }
  double segments() const { return double(cc.cwnd()) / mss; }
  // cwnd at `segs`, then a fast retransmit and a full ACK: congestion
  // avoidance from ssthresh = beta * segs.
  void loss_at(std::uint32_t segs) {
    cc.on_enter_recovery(cc.cwnd(), now_ns);
    cc.on_exit_recovery(segs * mss);
    (void)segs;
  }
  void grow_to(std::uint32_t segs) {
    while (cc.cwnd() < segs * mss) ack();
  }
};

TEST(cubic_test, IsTheDefaultAndNamedCubic) {
  EXPECT_EQ(make_congestion_control(connection_config{}.congestion)->name(), "cubic");
  EXPECT_EQ(make_congestion_control(congestion_algorithm::new_reno)->name(), "newreno");
}

TEST(cubic_test, MultiplicativeDecreaseIsBetaOfCwnd_RFC9438_4_6) {
  flow f;
  f.grow_to(100);
  f.cc.on_enter_recovery(60 * mss, 0);  // an application-limited flight: cwnd, not FlightSize, counts
  EXPECT_EQ(f.cc.ssthresh(), 70 * mss);
  EXPECT_EQ(f.cc.cwnd(), 73 * mss);  // RFC 5681 3.2 step 3's inflation as for any controller
  EXPECT_DOUBLE_EQ(f.cc.w_max(), 100);
}

TEST(cubic_test, FastConvergenceLowersWmaxWhenTheWindowFellShort_RFC9438_4_7) {
  flow f;
  f.grow_to(100);
  f.cc.on_enter_recovery(100 * mss, 0);
  f.cc.on_exit_recovery(100 * mss);  // cwnd = ssthresh = 70
  f.grow_to(80);
  f.cc.on_enter_recovery(80 * mss, 0);
  EXPECT_NEAR(f.cc.w_max(), 80 * (1 + cubic::beta) / 2, 0.01);  // 68, below the 80 reached
  EXPECT_NEAR(f.cc.ssthresh(), 56 * mss, 1);
}

TEST(cubic_test, KIsTheTimeBackToWmax_RFC9438_Eq2) {
  flow f;
  f.grow_to(100);
  f.loss_at(100);
  ASSERT_EQ(f.cc.cwnd(), 70 * mss);
  f.ack();  // the first ACK in congestion avoidance begins the epoch
  EXPECT_NEAR(f.cc.k_seconds(), std::cbrt((100 - 70) / cubic::c), 1e-9);  // 4.217 s
  EXPECT_NEAR(f.cc.w_cubic(0), 70, 1e-9);
  EXPECT_NEAR(f.cc.w_cubic(f.cc.k_seconds()), 100, 1e-9);
}

TEST(cubic_test, WindowFollowsWcubicConcaveThenConvex_RFC9438_4_4_And_4_5) {
  flow f;  // 400 segments at 100 ms: W_est stays below the curve (K = 6.69 s)
  f.grow_to(400);
  f.loss_at(400);
  f.ack();
  const std::uint64_t epoch = f.now_ns;
  const double k = f.cc.k_seconds();
  ASSERT_NEAR(k, std::cbrt(400 * (1 - cubic::beta) / cubic::c), 0.01);
  double last = f.segments();
  for (double t : {1.0, 2.0, 4.0, k, 8.0, 9.0}) {
    while (double(f.now_ns - epoch) / 1e9 < t) f.round();
    const double at = double(f.now_ns - epoch) / 1e9;
    // cwnd aims one RTT ahead on the curve: between W_cubic(t) and W_cubic(t + RTT).
    EXPECT_GE(f.segments(), f.cc.w_cubic(at) - 1) << "t = " << at;
    EXPECT_LE(f.segments(), f.cc.w_cubic(at + 0.1) + 1) << "t = " << at;
    EXPECT_GE(f.segments(), last) << "t = " << at;
    last = f.segments();
  }
  EXPECT_GT(f.segments(), 400);  // convex past W_max
  EXPECT_GT(f.cc.w_est(), 280);
  EXPECT_LT(f.cc.w_est(), f.cc.w_cubic(9));  // the cubic region throughout
}

TEST(cubic_test, ShortRttFollowsTheRenoFriendlyEstimate_RFC9438_4_3) {
  flow f;
  f.rtt_ns = 1 * ms;  // W_est grows per RTT, W_cubic per second: Reno wins
  f.grow_to(20);
  f.loss_at(20);  // W_max 20, cwnd 14, K = 2.47 s
  ASSERT_EQ(f.cc.cwnd(), 14 * mss);
  for (int i = 0; i < 10; ++i) f.round();
  // alpha_cubic = 3 (1 - beta) / (1 + beta) = 0.53 segments per RTT below cwnd_prior.
  EXPECT_NEAR(f.cc.w_est(), 14 + 10 * cubic::alpha, 0.5);
  EXPECT_NEAR(f.segments(), f.cc.w_est(), 1.0);
  EXPECT_GT(f.segments(), f.cc.w_cubic(double(f.now_ns) / 1e9) + 1);
  // Past cwnd_prior (20) alpha is 1: a segment per RTT, Reno's own slope.
  while (f.cc.w_est() < 20) f.round();
  const double from = f.cc.w_est();
  for (int i = 0; i < 10; ++i) f.round();
  EXPECT_NEAR(f.cc.w_est() - from, 10, 0.6);
}

TEST(cubic_test, FirstEpochAfterATimeoutStartsAtItsPlateau_RFC9438_4_8) {
  flow f;
  f.grow_to(100);
  f.cc.on_timeout(100 * mss);
  EXPECT_EQ(f.cc.cwnd(), mss);
  EXPECT_EQ(f.cc.ssthresh(), 70 * mss);
  f.grow_to(70);  // slow start back to ssthresh
  f.ack();
  EXPECT_EQ(f.cc.k_seconds(), 0);
  EXPECT_NEAR(f.cc.w_max(), f.segments(), 1.0);
}

TEST(cubic_test, RepeatedTimeoutHoldsSsthresh_RFC5681_3_1) {
  flow f;
  f.grow_to(100);
  f.cc.on_timeout(100 * mss);
  f.cc.on_timeout(mss);
  EXPECT_EQ(f.cc.ssthresh(), 70 * mss);
}

TEST(cubic_test, IdleRestartBeginsANewEpoch_RFC9438_5_8) {
  flow f;
  f.grow_to(100);
  f.loss_at(100);
  f.ack();
  f.now_ns += 60'000 * ms;  // a minute of silence: W_cubic(60 s) would be far above W_max
  f.cc.on_idle_restart(f.now_ns);
  EXPECT_EQ(f.cc.cwnd(), f.cc.initial_window());
  f.grow_to(70);  // slow start back to ssthresh
  for (int i = 0; i < 10; ++i) f.ack();
  EXPECT_NEAR(f.cc.k_seconds(), std::cbrt((100 - 70) / cubic::c), 0.01);
  EXPECT_LT(f.segments(), 71);  // on the curve's start, not 60 s along it
}

// Two flows on one curve; one leaves the window unused for 2 s before it
// sends again. Its t leaves those 2 s out, and the two grow alike
// (without the rule the quiet one aims at W_cubic(t + 2 s) and ends five
// rounds at 372 segments, the other at 309).
TEST(cubic_test, TimeWithNothingToSendIsNotPartOfT_RFC9438_5_8) {
  flow busy, quiet;
  for (flow* f : {&busy, &quiet}) {
    f->grow_to(400);
    f->loss_at(400);
    f->ack();
    ASSERT_TRUE(f->cc.epoch_open());
    f->round();
  }
  const std::uint64_t start = quiet.cc.epoch_start_ns();
  quiet.now_ns += 2'000 * ms;
  quiet.cc.on_send_from_empty(quiet.now_ns, 2'000 * ms);
  EXPECT_EQ(quiet.cc.epoch_start_ns(), start + 2'000 * ms);
  for (int i = 0; i < 5; ++i) {
    busy.round();
    quiet.round();
  }
  EXPECT_NEAR(quiet.segments(), busy.segments(), 1.0);
}

// The quiet spell may have begun before the epoch did (the ACK that opened
// it came after the last send): t starts at zero then, never below it.
TEST(cubic_test, TheEpochStartNeverPassesNow_RFC9438_5_8) {
  flow f;
  f.grow_to(100);
  f.loss_at(100);
  f.ack();
  f.now_ns += 500 * ms;
  f.cc.on_send_from_empty(f.now_ns, 800 * ms);
  EXPECT_EQ(f.cc.epoch_start_ns(), f.now_ns);
  const double before = f.segments();
  f.ack();
  EXPECT_LT(f.segments(), before + 1);  // at the curve's start: W_cubic(0) = cwnd_epoch
}

// HyStart++ (RFC 9406 4.2).

TEST(hystart_test, SlowStartGrowsByUpToLSegmentsPerAck) {
  flow f;
  f.ack(0, 20 * mss);  // a stretch ACK of 20 segments: L = 8 without pacing
  EXPECT_EQ(f.cc.cwnd(), 18 * mss);
  f.ack(0, 3 * mss);
  EXPECT_EQ(f.cc.cwnd(), 21 * mss);
}

TEST(hystart_test, RttRiseBelowThresholdStaysInSlowStart) {
  flow f;
  f.round(100 * ms);
  f.round(112 * ms);  // RttThresh = max(4, min(100 / 8, 16)) = 12.5 ms
  EXPECT_EQ(f.cc.slow_start_state().current(), hystart::phase::slow_start);
}

TEST(hystart_test, RttRiseEntersConservativeSlowStart) {
  flow f;
  f.round(100 * ms);
  const std::uint32_t before = f.cc.cwnd();
  for (unsigned i = 0; i < hystart::n_rtt_sample; ++i) f.ack(113 * ms);
  EXPECT_EQ(f.cc.slow_start_state().current(), hystart::phase::conservative);
  EXPECT_EQ(f.cc.slow_start_state().css_baseline_ns(), 113 * ms);
  // The 8th sample made the exit, with a quarter of its growth.
  EXPECT_EQ(f.cc.cwnd(), before + 7 * mss + mss / hystart::css_growth_divisor);
  f.ack(113 * ms);
  EXPECT_EQ(f.cc.cwnd(), before + 7 * mss + 2 * mss / hystart::css_growth_divisor);
  EXPECT_EQ(f.cc.ssthresh(), UINT32_MAX);
}

TEST(hystart_test, FewerThanNRttSamplesDecideNothing) {
  flow f;
  f.round(100 * ms);
  for (unsigned i = 0; i + 1 < hystart::n_rtt_sample; ++i) f.ack(150 * ms);
  EXPECT_EQ(f.cc.slow_start_state().current(), hystart::phase::slow_start);
}

TEST(hystart_test, CssRoundsCompleteEnterCongestionAvoidance) {
  flow f;
  f.round(100 * ms);
  f.round(120 * ms);
  ASSERT_EQ(f.cc.slow_start_state().current(), hystart::phase::conservative);
  const seq32 css_from = f.una;
  while (f.cc.ssthresh() == UINT32_MAX && f.una - css_from < 1'000'000) {
    f.now_ns += ms;
    f.ack(120 * ms);
  }
  EXPECT_EQ(f.cc.slow_start_state().current(), hystart::phase::done);
  EXPECT_EQ(f.cc.ssthresh(), f.cc.cwnd());  // "setting the ssthresh to the current cwnd"
  const std::uint32_t at_exit = f.cc.cwnd();
  f.ack(120 * ms);
  EXPECT_LT(f.cc.cwnd(), at_exit + mss);  // congestion avoidance now
}

TEST(hystart_test, RttBackBelowBaselineResumesSlowStart) {
  flow f;
  f.round(100 * ms);
  f.round(120 * ms);
  ASSERT_EQ(f.cc.slow_start_state().current(), hystart::phase::conservative);
  f.round(100 * ms);  // the rise was jitter
  EXPECT_EQ(f.cc.slow_start_state().current(), hystart::phase::slow_start);
  const std::uint32_t before = f.cc.cwnd();
  f.ack(100 * ms);
  EXPECT_EQ(f.cc.cwnd(), before + mss);
}

TEST(hystart_test, LossEndsHystartAndLaterSlowStartIsPlain) {
  flow f;
  f.round(100 * ms);
  f.cc.on_timeout(f.cc.cwnd());
  EXPECT_EQ(f.cc.slow_start_state().current(), hystart::phase::done);
  const std::uint32_t before = f.cc.cwnd();
  f.ack(0, 20 * mss);  // RFC 3465 L = 2 again
  EXPECT_EQ(f.cc.cwnd(), before + 2 * mss);
}

}  // namespace
}  // namespace affine::stack::tcp
