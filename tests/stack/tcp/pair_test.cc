// Two connections through an in-memory wire at virtual time (wire_pair.hh):
// everything at once (handshake, bulk data, loss recovery, reordering, flow
// control, both closes), judged by the bytes that arrive. The wire drops and
// delays segments from a seed, so a failure replays.

#include <gtest/gtest.h>

#include <cstdint>

#include "base/xoshiro.hh"
#include "stack/tcp/connection.hh"
#include "stack/tcp/ring_buffer.hh"
#include "tests/stack/tcp/pattern.hh"
#include "tests/stack/tcp/wire_pair.hh"

namespace affine::stack::tcp::testing {
namespace {

constexpr std::uint64_t ms = 1'000'000;

struct scenario {
  const char* name;
  double loss = 0;                   // probability a segment is dropped
  double ce = 0;                     // probability an ECT segment is marked CE (A asks for ECN when > 0)
  std::uint64_t delay_ns = 5 * ms;   // one way
  std::uint64_t jitter_ns = 0;       // extra delay drawn per segment: reordering
  std::size_t read_chunk = SIZE_MAX; // bytes the receiver reads per read_interval
  std::uint64_t read_interval_ns = ms;
  std::size_t total = 1 << 20;
  std::uint64_t seed = 1;
};

void PrintTo(const scenario& s, std::ostream* os) { *os << s.name; }

// The scenario's wire: each segment lost with probability `loss`, else
// delivered after delay_ns plus up to jitter_ns.
class seeded_wire final : public wire_model {
 public:
  explicit seeded_wire(const scenario& sc)
      : sc_(sc), rng_({mix64(sc.seed), mix64(sc.seed + 1), mix64(sc.seed + 2), mix64(sc.seed + 3)}) {}
  void carry(bool, tcp_segment& seg, std::uint64_t now, function_ref<void(std::uint64_t)> arrive) override {
    if (rng_.chance(sc_.loss)) return;
    if (seg.ecn == ip_ecn::ect0 && rng_.chance(sc_.ce)) seg.ecn = ip_ecn::ce;
    arrive(now + sc_.delay_ns + rng_.below(sc_.jitter_ns + 1));
  }

 private:
  scenario sc_;
  xoshiro256ss rng_;
};

pair_config config_of(const scenario& sc) {
  pair_config c{.total = sc.total, .read_chunk = sc.read_chunk, .read_interval_ns = sc.read_interval_ns};
  if (sc.ce > 0) c.a.ecn = ecn_mode::on;
  return c;
}

class Pair : public ::testing::TestWithParam<scenario> {
 protected:
  void TearDown() override {
    EXPECT_EQ(connection::live_count(), 0u);
    EXPECT_EQ(ring_buffer::live_bytes(), 0u);
  }
};

TEST_P(Pair, StreamArrivesWholeAndBothSidesClose) {
  const scenario& sc = GetParam();
  seeded_wire wire(sc);
  wire_pair p(config_of(sc), wire);
  const pair_outcome outcome = p.run();
  ASSERT_EQ(outcome, pair_outcome::done) << "error, stalled or too slow: A " << to_string(p.a().state()) << " " << p.a().error().message()
                       << ", B " << (p.has_b() ? to_string(p.b().state()) : "none") << ", received "
                       << p.received().size();
  const std::string want = pattern(0, sc.total);
  ASSERT_EQ(p.received().size(), want.size());
  EXPECT_TRUE(std::equal(want.begin(), want.end(), p.received().begin(),
                         [](char c, std::byte b) { return std::byte(c) == b; }));
  EXPECT_FALSE(p.a().error());
  EXPECT_FALSE(p.b().error());
  if (sc.ce > 0) {
    // RFC 3168: the marks reached B, came back as echoes, and A reduced for
    // them; with nothing lost, nothing needed resending for congestion.
    EXPECT_TRUE(p.a().ecn_enabled());
    EXPECT_GT(p.b().stats().ecn_ce_received, 0u);
    EXPECT_GT(p.a().stats().ecn_reductions, 0u);
    if (sc.loss == 0) {
      EXPECT_EQ(p.a().stats().fast_retransmits, 0u);
      EXPECT_EQ(p.a().stats().retransmission_timeouts, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Wire, Pair,
    ::testing::Values(scenario{.name = "clean"},
                      scenario{.name = "loss1pct", .loss = 0.01, .seed = 2},
                      scenario{.name = "ecn_marks", .ce = 0.02, .seed = 5},
                      scenario{.name = "ecn_marks_loss", .loss = 0.01, .ce = 0.02, .seed = 6},
                      scenario{.name = "loss5pct_reorder", .loss = 0.05, .jitter_ns = 3 * ms, .seed = 3},
                      scenario{.name = "slow_reader", .read_chunk = 4000, .read_interval_ns = ms, .total = 1 << 19},
                      scenario{.name = "stalling_reader", .read_chunk = 1 << 30, .read_interval_ns = 300 * ms},
                      scenario{.name = "slow_reader_loss", .loss = 0.03, .read_chunk = 8000, .total = 1 << 19,
                               .seed = 4}),
    [](const ::testing::TestParamInfo<scenario>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace affine::stack::tcp::testing
