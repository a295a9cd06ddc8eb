// The lossy bridge's flags: each becomes the impairment it names, in the
// units it says, and a bad value is refused in one line naming the flag
// and its range.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/lossy/options.hh"

namespace affine::bench::lossy {
namespace {

std::expected<bridge_options, std::string> parse(std::vector<std::string> extra) {
  std::vector<std::string> args{"--iface-a", "a0br", "--iface-b", "b0br"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parse_bridge_options(args);
}

TEST(LossyBridgeOptions, FlagsBecomeTheImpairmentInItsUnits) {
  auto o = parse({"--seed", "7", "--loss-pct", "1.5", "--delay-us", "500", "--jitter-us", "20", "--rate-mbit", "400",
                  "--queue-kb", "64", "--ecn-mark-kb", "16", "--core", "1"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->iface_a, "a0br");
  EXPECT_EQ(o->iface_b, "b0br");
  EXPECT_EQ(o->seed, 7u);
  EXPECT_DOUBLE_EQ(o->each_direction.loss, 0.015);
  EXPECT_EQ(o->each_direction.delay_ns, 500'000u);
  EXPECT_EQ(o->each_direction.jitter_ns, 20'000u);
  EXPECT_EQ(o->each_direction.rate_bytes_per_s, 50'000'000u);
  EXPECT_EQ(o->each_direction.rate_queue_bytes, 64u * 1024);
  EXPECT_EQ(o->each_direction.ecn_mark_bytes, 16u * 1024);
  EXPECT_EQ(o->core, 1u);
  EXPECT_FALSE(o->each_direction.burst);
}

TEST(LossyBridgeOptions, BurstIsAGilbertElliottChain) {
  auto o = parse({"--burst", "0.005,0.3"});
  ASSERT_TRUE(o) << o.error();
  ASSERT_TRUE(o->each_direction.burst);
  EXPECT_DOUBLE_EQ(o->each_direction.burst->good_to_bad, 0.005);
  EXPECT_DOUBLE_EQ(o->each_direction.burst->bad_to_good, 0.3);
  EXPECT_DOUBLE_EQ(o->each_direction.burst->loss_in_bad, 1.0);
  auto partial = parse({"--burst", "0.01,0.5,0.8"});
  ASSERT_TRUE(partial) << partial.error();
  EXPECT_DOUBLE_EQ(partial->each_direction.burst->loss_in_bad, 0.8);
  auto off = parse({"--burst", "0.01,0.5", "--burst", "off"});
  ASSERT_TRUE(off) << off.error();
  EXPECT_FALSE(off->each_direction.burst);
}

TEST(LossyBridgeOptions, BadValuesNameTheFlagAndItsRange) {
  EXPECT_EQ(parse({"--loss-pct", "101"}).error(), "--loss-pct: \"101\" is not a number in 0..100");
  EXPECT_EQ(parse({"--rate-mbit", "-1"}).error(), "--rate-mbit: \"-1\" is not a number in 0..400000");
  EXPECT_EQ(parse({"--burst", "0.1,2"}).error(), "--burst bad_to_good: \"2\" is not a number in 0..1");
  EXPECT_EQ(parse({"--burst", "0.1,0"}).error(), "--burst bad_to_good: 0 would never end a burst; 0 < p <= 1");
  EXPECT_EQ(parse({"--burst", "0.1"}).error(), "--burst: \"0.1\" is not GOOD_TO_BAD,BAD_TO_GOOD[,LOSS_IN_BAD] or off");
  EXPECT_EQ(parse({"--delay-us"}).error(), "--delay-us needs a value");
  EXPECT_EQ(parse({"--ecn-mark-kb", "16"}).error(),
            "wire impairment 'ecn_mark_bytes' = 16384: marks by the rate limiter's backlog, and 'rate_bytes_per_s' "
            "is 0 (no rate limit: no backlog)");
  EXPECT_EQ(parse({"--speed", "1"}).error(), "unknown option --speed");
  EXPECT_EQ(parse_bridge_options(std::vector<std::string>{"--iface-a", "x"}).error(),
            "--iface-a and --iface-b are required");
  EXPECT_EQ(parse_bridge_options(std::vector<std::string>{"--iface-a", "x", "--iface-b", "x"}).error(),
            "--iface-a and --iface-b are both x");
}

}  // namespace
}  // namespace affine::bench::lossy
