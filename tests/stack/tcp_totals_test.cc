// The stack's totals of what its connections counted (stack/tcp_totals.hh):
// the table names each counter once, and a fold adds what moved, once; the
// stats line and the metrics show it. peer_gone_test.cc checks them on
// connections that live and end.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <string>
#include <vector>

#include "stack/counters.hh"
#include "stack/tcp_totals.hh"

namespace affine::stack {
namespace {

// Each of connection_stats' counters is in the totals once (their size is
// checked where they are declared).
TEST(tcp_totals, EachCounterOnce) {
  for (std::size_t i = 0; i < tcp_total_count; ++i)
    for (std::size_t j = i + 1; j < tcp_total_count; ++j) {
      EXPECT_NE(tcp_totals[i].counter, tcp_totals[j].counter) << tcp_totals[i].name << " " << tcp_totals[j].name;
      EXPECT_NE(tcp_totals[i].name, tcp_totals[j].name);
    }
}

// A fold adds what moved since the last one, and nothing twice.
TEST(tcp_totals, AFoldAddsWhatMovedSinceTheLast) {
  std::array<std::atomic<std::uint64_t>, tcp_total_count> totals{};
  tcp::connection_stats now, folded;
  now.segments_sent = 100;  // the stack counts these itself
  now.sack_recoveries = 2;
  now.buffer_growth_held = 1;
  fold_tcp_totals(now, folded, totals);
  now.sack_recoveries = 5;
  fold_tcp_totals(now, folded, totals);
  fold_tcp_totals(now, folded, totals);
  core_counters c;
  for (std::size_t i = 0; i < tcp_total_count; ++i) c.tcp_counted[i].store(totals[i].load());
  const std::string line = format_counters(0, c);
  EXPECT_NE(line.find(" tcp.sack_recoveries=5"), std::string::npos) << line;
  EXPECT_NE(line.find(" tcp.buffer_growth_held=1"), std::string::npos) << line;
  EXPECT_EQ(line.find("segments_sent"), std::string::npos) << line;
  std::vector<metric_sample> samples;
  const core_counters* cores[] = {&c};
  append_metrics(samples, 3, cores);
  const auto m = std::ranges::find(samples, std::string("affine_stack_tcp_sack_recoveries_total"), &metric_sample::name);
  ASSERT_NE(m, samples.end());
  EXPECT_EQ(m->value, 5u);
}

}  // namespace
}  // namespace affine::stack
