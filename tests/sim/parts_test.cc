// The simulator's building blocks: the event heap's order, the ring, the
// histogram's quantiles, the distributions, the SVG writer.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim/event_queue.hh"
#include "sim/histogram.hh"
#include "sim/random.hh"
#include "sim/ring.hh"
#include "sim/svg.hh"

namespace affine::sim {
namespace {

TEST(event_queue, pops_in_time_order_and_ties_in_push_order) {
  event_queue q;
  q.push(30, event_kind::load_tick, 1);
  q.push(10, event_kind::core_done, 2);
  q.push(30, event_kind::sample_tick, 3);
  q.push(20, event_kind::wake_arrive, 4);
  q.push(10, event_kind::spin_end, 5);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().a);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{2, 5, 4, 1, 3}));
}

TEST(ring, is_fifo_refuses_when_full_and_takes_from_the_middle) {
  ring<int> r(3);
  EXPECT_TRUE(r.push(1));
  EXPECT_TRUE(r.push(2));
  EXPECT_TRUE(r.push(3));
  EXPECT_FALSE(r.push(4));
  EXPECT_EQ(r.pop(), 1);
  EXPECT_TRUE(r.push(4));  // wraps
  EXPECT_EQ(r.take(1), 3);
  EXPECT_EQ(r.size(), 2U);
  EXPECT_EQ(r.pop(), 2);
  EXPECT_EQ(r.pop(), 4);
  EXPECT_TRUE(r.empty());
}

TEST(histogram, small_values_are_exact_and_large_ones_within_two_percent) {
  histogram h;
  for (std::uint64_t v = 1; v <= 50; ++v) h.add(v);
  EXPECT_EQ(h.quantile_ns(0.5), 25);
  EXPECT_EQ(h.quantile_ns(1.0), 50);
  EXPECT_DOUBLE_EQ(h.mean_ns(), 25.5);

  histogram big;
  for (std::uint64_t v = 1; v <= 100'000; ++v) big.add(v * 1000);
  EXPECT_NEAR(big.quantile_ns(0.50), 50'000'000, 50'000'000 * 0.02);
  EXPECT_NEAR(big.quantile_ns(0.99), 99'000'000, 99'000'000 * 0.02);
  const auto cdf = big.cdf();
  EXPECT_DOUBLE_EQ(cdf.back().second, 1.0);
  EXPECT_TRUE(std::ranges::is_sorted(cdf));
}

TEST(histogram, empty_has_no_quantile) {
  histogram h;
  EXPECT_EQ(h.quantile_ns(0.99), 0);
  EXPECT_EQ(h.mean_ns(), 0);
  EXPECT_TRUE(h.cdf().empty());
}

double sample_mean(const distribution& d, std::uint64_t seed) {
  rng r(seed, 7);
  double sum = 0;
  constexpr int n = 200'000;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(d.sample(r));
  return sum / n;
}

TEST(distribution, has_the_mean_it_was_given) {
  EXPECT_EQ(sample_mean({dist_kind::fixed, 1234, 100}, 1), 1234);
  EXPECT_NEAR(sample_mean({dist_kind::exponential, 10'000, 100}, 1), 10'000, 10'000 * 0.01);
  EXPECT_NEAR(sample_mean({dist_kind::lognormal, 150'000, 100}, 1), 150'000, 150'000 * 0.02);
  EXPECT_NEAR(sample_mean({dist_kind::lognormal, 20'000, 30}, 1), 20'000, 20'000 * 0.01);
}

TEST(rng, same_seed_and_stream_same_numbers_other_stream_other_numbers) {
  rng a(42, 3), b(42, 3), c(42, 4), d(43, 3);
  const std::uint64_t first = a.next();
  EXPECT_EQ(first, b.next());
  EXPECT_NE(first, c.next());
  EXPECT_NE(first, d.next());
}

TEST(svg, draws_one_polyline_per_series_and_escapes_names) {
  chart c{.title = "t<1>", .x_label = "x", .y_label = "y", .log_x = true, .y_max = 1.0};
  c.lines.push_back({"a&b", {{1, 0.1}, {10, 0.5}, {100, 1.0}}});
  c.lines.push_back({"c", {{0, 0.2}, {2, 0.3}}});  // x = 0 cannot be drawn on a log axis
  const std::string s = render_svg(c);
  EXPECT_TRUE(s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(s.ends_with("</svg>\n"));
  std::size_t polylines = 0;
  for (std::size_t p = s.find("<polyline"); p != std::string::npos; p = s.find("<polyline", p + 1)) ++polylines;
  EXPECT_EQ(polylines, 2U);
  EXPECT_NE(s.find("t&lt;1&gt;"), std::string::npos);
  EXPECT_NE(s.find("a&amp;b"), std::string::npos);
  EXPECT_EQ(s.find("nan"), std::string::npos);
  EXPECT_EQ(s.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace affine::sim
